# Builder of cuda-compiler.nix: the CUDA wheels' nvidia/cu<major>/ trees merged into $out
# (bin/ nvcc and its programs, include/, nvvm/, lib64/ with the unversioned names).
# The programs get the store's ld.so and runtime libraries (lib.sh's patch_elf_tree), as
# the environments' copies of the same files do.
source "$libSh"
unpacked="$NIX_BUILD_TOP/unpacked"
mkdir -p "$unpacked"
for wheel in $wheels; do
  unzip -q -o "$wheel" 'nvidia/*' -d "$unpacked"
done
set -- "$unpacked"/nvidia/cu*
[ -d "$1/bin" ] || { echo "cuda-compiler: no nvidia/cu*/bin in the wheels" >&2; exit 1; }
mkdir -p "$out"
cp -r "$1/bin" "$1/include" "$1/nvvm" "$out/"
chmod -R u+w "$out"
find "$out/bin" "$out/nvvm/bin" -type f -exec chmod a+x {} +
mkdir -p "$out/lib64/stubs"
for lib in "$1"/lib/*; do
  [ -f "$lib" ] || continue
  cp "$lib" "$out/lib64/"
  name=${lib##*/}
  case $name in
    *.so.*) plain=${name%%.so.*}.so; [ -e "$out/lib64/$plain" ] || ln -s "$name" "$out/lib64/$plain" ;;
  esac
done
ln -s lib64 "$out/lib"
patch_elf_tree "$out/bin"
patch_elf_tree "$out/nvvm"
patch_elf_tree "$out/lib64"
chmod -R a-w "$out"
"$out/bin/nvcc" --version | tail -2
