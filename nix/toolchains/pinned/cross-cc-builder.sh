# The cross C/C++ toolchain for $triple (aarch64-linux-gnu): Debian's cross gcc 12 and
# binutils (x86_64 programs) with the target's sysroot (the *-arm64-cross packages: glibc,
# kernel and libstdc++ headers, link-time libraries, under usr/$triple) and the target's
# Python headers (libpython3.11-dev of that architecture, under usr/include) in one tree.
# Only the x86_64 programs are patched to run from the store; the target's files are
# left as they are. Wrappers in $out/bin pass --sysroot=$out, so nothing is looked up in
# /usr; they never add the store ld.so: what they link runs on the target, not here.
source "$libSh"
unpack_debs "$out" $crossDebs
relative_symlinks "$out"
# manylinux_2_28: as in cc-builder.sh (__libc_single_threaded is GLIBC_2.32).
rm -f "$out/usr/$triple/include/sys/single_threaded.h"
rm -rf "$out/usr/share/doc" "$out/usr/share/man" "$out/usr/share/info" "$out/usr/share/locale" "$out/usr/share/lintian"
patch_elf_tree "$out/usr/bin"
patch_elf_tree "$out/usr/libexec"
# The cross binutils' own libraries (libbfd-2.40-arm64.so, libopcodes-...) are x86_64 ones
# beside the runtime's: the programs find them there too.
patch_elf_tree "$out/usr/lib/x86_64-linux-gnu"
for file in "$out"/usr/bin/"$triple"-*; do
  [ -f "$file" ] && [ ! -L "$file" ] && is_elf "$file" || continue
  patchelf --add-rpath "$out/usr/lib/x86_64-linux-gnu" "$file"
done
# The compiler's own programs (cc1, cc1plus, collect2, lto1, lto-wrapper, the LTO plugin);
# the target's libraries there are symlinks or archives, which patch_elf_tree passes over.
for program in cc1 cc1plus collect2 lto1 lto-wrapper liblto_plugin.so; do
  file="$out/usr/lib/gcc-cross/$triple/12/$program"
  [ -f "$file" ] && [ ! -L "$file" ] || continue
  chmod u+w "$file"
  if patchelf --print-interpreter "$file" >/dev/null 2>&1; then patchelf --set-interpreter "$ld" "$file"; fi
  patchelf --add-rpath "$runtime/lib" "$file"
done
# gcc looks for as and ld beside cc1 before PATH: put them there.
for tool in as ld; do
  ln -sfn "../../../../bin/$triple-$tool" "$out/usr/lib/gcc-cross/$triple/12/$tool"
done
mkdir -p "$out/bin"
for tool in gcc g++ cpp; do
  for name in $tool $triple-$tool; do
    printf '#!%s\nexec %s --sysroot=%s "$@"\n' "$runtime/bin/bash" "$out/usr/bin/$triple-$tool-12" "$out" > "$out/bin/$name"
    chmod +x "$out/bin/$name"
  done
done
ln -s g++ "$out/bin/c++"
ln -s gcc "$out/bin/cc"
for tool in as ld ld.bfd ar nm ranlib strip objcopy objdump readelf strings size c++filt; do
  ln -s "../usr/bin/$triple-$tool" "$out/bin/$tool"
done
# Self-test: a C++ shared object for the target, and its ELF machine.
printf '#include <vector>\n#include <Python.h>\nint probe(int n) { std::vector<int> v(n); return (int)v.size() + (int)sizeof(Py_ssize_t); }\n' > probe.cc
"$out/bin/g++" -O1 -fPIC -shared -I"$out/usr/include/python3.11" probe.cc -o probe.so
"$out/bin/readelf" -h probe.so > probe.header
grep -q 'Machine:.*AArch64' probe.header
echo "cross cc: $("$out/bin/gcc" --version | head -1), target $("$out/bin/gcc" -dumpmachine)"
