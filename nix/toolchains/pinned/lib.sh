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
