#!/usr/bin/env bash
# Debian 13's Nix (nix-bin 2.26) in a private prefix, beside Debian 12's Nix 2.8, for
# tests/nix/test_modern_nix.py. Usage: bash .ci/modern-nix.sh [DIR]   (default .venv/modern-nix)
#
# apt-get reads a trixie source list from DIR/apt only (the system's apt sources, lists and
# dpkg database are not read or changed); nix-bin, bash-static and the libraries they link
# are downloaded and unpacked into DIR/prefix, and nix is patched to load them through
# trixie's own ld.so (its RPATH names DIR/prefix's library directory). Nothing is installed:
# the result runs only with a store and a configuration the caller names (the test uses
# `store = local?root=...` and NIX_CONF_DIR), so the machine's /nix is never touched.
# Prints the directory holding `nix`. Safe to rerun: a working prefix is left as it is.
set -euo pipefail
cd "$(dirname "$0")/.."
dir=$(realpath -m "${1:-.venv/modern-nix}")
bin=$dir/prefix/usr/bin
if [ -x "$bin/nix" ] && "$bin/nix" --version >/dev/null 2>&1; then
    echo "$bin"
    exit 0
fi
log=$(mktemp)
quiet() { "$@" >"$log" 2>&1 || { cat "$log" >&2; echo "modern-nix: failed: $*" >&2; exit 1; }; }
rm -rf "$dir/prefix" "$dir/debs"
mkdir -p "$dir/apt/lists/partial" "$dir/apt/cache/archives/partial" "$dir/debs" "$dir/prefix"
echo "deb [signed-by=/usr/share/keyrings/debian-archive-keyring.gpg] http://deb.debian.org/debian trixie main" \
    > "$dir/apt/sources.list"
apt_opts=(
    -o "Dir::Etc::sourcelist=$dir/apt/sources.list" -o Dir::Etc::sourceparts=/nonexistent
    -o "Dir::State::Lists=$dir/apt/lists" -o "Dir::Cache=$dir/apt/cache" -o Dir::State::status=/dev/null
    -o APT::Architectures::=amd64 -o APT::Sandbox::User=root
)
quiet apt-get "${apt_opts[@]}" update
# nix-bin's shared libraries: the library packages of its dependency closure (the perl,
# PAM and debconf side of that closure is for nix's perl bindings and login tools: left out)
libs=$(apt-cache "${apt_opts[@]}" depends --recurse --no-recommends --no-suggests --no-conflicts --no-breaks \
        --no-replaces --no-enhances --no-pre-depends nix-bin \
    | grep -v '^[ <]' | sort -u \
    | grep -E '^(lib|zlib1g$)' \
    | grep -vE 'perl|pam|debconf|debian-installer|semanage|newt|slang|textwrap|sepol|selinux|audit|cap-ng|libdb5|gdbm')
(cd "$dir/debs" && quiet apt-get "${apt_opts[@]}" download nix-bin bash-static zlib1g $libs)
for deb in "$dir"/debs/*.deb; do
    dpkg-deb -x "$deb" "$dir/prefix"
done
lib=$dir/prefix/usr/lib/x86_64-linux-gnu
# DT_RPATH (not RUNPATH): it also applies to the libraries' own dependencies
quiet patchelf --set-interpreter "$lib/ld-linux-x86-64.so.2" --force-rpath --set-rpath "$lib" "$bin/nix"
"$bin/nix" --version >/dev/null
echo "$bin"
