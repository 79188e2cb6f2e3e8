# Helpers for the pinned toolchain's builders (bash from the runtime derivation).
# $runtime holds the flat runtime libraries and the patched bash/patchelf/busybox tools.
set -euo pipefail
export PATH="$runtime/bin"
ld="$runtime/lib/ld-linux-x86-64.so.2"

# unpack_debs DEST DEB... : the data of each .deb, merged into DEST.
unpack_debs() {
  local dest=$1; shift
  mkdir -p "$dest"
  for deb in "$@"; do dpkg-deb -x "$deb" "$dest"; done
}

# relative_symlinks ROOT : absolute symlinks inside ROOT (a .deb's /usr/... targets)
# become relative, so the tree works wherever it lives (--sysroot, store paths).
relative_symlinks() {
  local root=$1 link target dir up
  find "$root" -type l | while IFS= read -r link; do
    target=$(readlink "$link")
    case $target in /*) ;; *) continue ;; esac
    dir=${link%/*}
    dir=${dir#"$root"}
    up=""
    while [ -n "$dir" ] && [ "${target#"$dir"/}" = "$target" ]; do
      dir=${dir%/*}
      up="../$up"
    done
    ln -sfn "$up${target#"$dir"/}" "$link"
  done
}

# is_elf FILE : whether FILE starts with the ELF magic.
is_elf() {
  local magic=""
  IFS= read -r -n 4 -d '' magic < "$1" 2>/dev/null || true
  [ "$magic" = $'\x7fELF' ]
}

# patch_elf_tree DIR : ELF programs get the store ld.so; ELF programs and libraries find
# the runtime libraries through their RPATH/RUNPATH, so their dependencies are store paths.
patch_elf_tree() {
  [ -d "$1" ] || return 0
  find "$1" -type f \( -name '*.so' -o -name '*.so.*' -o -perm -u+x \) | while IFS= read -r file; do
    is_elf "$file" || continue
    chmod u+w "$file"
    if patchelf --print-interpreter "$file" >/dev/null 2>&1; then
      patchelf --set-interpreter "$ld" "$file"
    fi
    if [ -n "$(patchelf --print-needed "$file" 2>/dev/null)" ]; then
      patchelf --add-rpath "$runtime/lib" "$file"
    fi
  done
}

# install_wheels_for_machine DIR WHEEL... : the wheels unpacked into DIR by the store
# Python's pip (pip --target, offline), for CPython 3.11 on $machine's manylinux platform
# tags, so another machine's wheels install here without running anything of them. No
# bytecode (the caller compiles it), no direct_url.json (it names the wheels' store paths).
install_wheels_for_machine() {
  local dir=$1; shift
  HOME="$PWD/home" PYTHONDONTWRITEBYTECODE=1 PIP_NO_CACHE_DIR=1 PIP_CONFIG_FILE=/dev/null \
    "$python/usr/bin/python3.11" "$pip/pip" install --quiet --no-index --no-deps --no-compile \
    --disable-pip-version-check --no-warn-script-location --target "$dir" \
    --only-binary=:all: --implementation cp --python-version 3.11 --platform "manylinux_2_28_$machine" \
    --platform "manylinux_2_27_$machine" --platform "manylinux_2_17_$machine" --platform "manylinux2014_$machine" "$@"
  find "$dir" -name direct_url.json -exec rm -f {} +
}

# wheel_layers PYTHON WHEEL... : the wheels in pip's install order, one line per layer (a
# wheel comes in a layer after every wheel of the list it requires). pip --no-deps installs
# one call's wheels in no such order, and where two wheels ship the same file the last one
# installed wins: nvidia-cutlass-dsl-libs-base's stub of cutlass.cute.experimental (it
# raises) must be overwritten by -libs-cu13's module, as a resolving pip install does.
wheel_layers() {
  local python=$1; shift
  "$python" - "$@" <<'PY'
import re, sys, zipfile
from email.parser import HeaderParser

def canonical(name):
    return re.sub(r"[-_.]+", "-", name).lower()

requires = {}
path_of = {}
for path in sys.argv[1:]:
    with zipfile.ZipFile(path) as wheel:
        member = next(n for n in wheel.namelist() if n.count("/") == 1 and n.endswith(".dist-info/METADATA"))
        meta = HeaderParser().parsestr(wheel.read(member).decode("utf-8", "replace"))
    name = canonical(meta["Name"])
    path_of[name] = path
    requires[name] = {canonical(re.match(r"\s*([A-Za-z0-9._-]+)", r).group(1)) for r in meta.get_all("Requires-Dist") or []}
depth = {}
def layer(name, seen=()):
    if name not in depth:
        inside = [d for d in requires[name] if d in path_of and d not in seen and d != name]
        depth[name] = 1 + max((layer(d, seen + (name,)) for d in inside), default=-1)
    return depth[name]
for name in path_of:
    layer(name)
for level in sorted(set(depth.values())):
    print(" ".join(sorted(path_of[n] for n in path_of if depth[n] == level)))
PY
}
