# retarget.sh SCRIPT: run one of the pinned toolchain's builder scripts on a native host of
# another machine (requests.hosts of nix/toolchain-lock.json, see parts.nix). The scripts
# and lib.sh name x86_64's paths (x86_64-linux-gnu, ld-linux-x86-64.so.2); they run here
# with the host's ($hostTriple, $hostLdSo) instead, so each is written once and the x86_64
# derivations stay as they are. Sourced by the seed busybox's sh (the runtime) or by bash.
if [ -n "${runtime:-}" ]; then sed="$runtime/bin/sed"; else sed="$seed/busybox sed"; fi
retargeted() {
  $sed -e "s|x86_64-linux-gnu|$hostTriple|g" -e "s|ld-linux-x86-64\.so\.2|$hostLdSo|g" "$1"
}
if [ -n "${libSh:-}" ]; then
  retargeted "$libSh" > retargeted-lib.sh
  libSh="$PWD/retargeted-lib.sh"
fi
retargeted "$1" > retargeted-builder.sh
. ./retargeted-builder.sh
