# The C/C++ toolchain: gcc, binutils and the sysroot (glibc, kernel and libstdc++ headers,
# link-time libraries) unpacked into one tree; programs patched to run from the store.
# Wrappers in $out/bin call gcc with --sysroot=$out, so nothing is looked up in /usr.
source "$libSh"
unpack_debs "$out" $sysrootDebs $compilerDebs $runtimeDebs
relative_symlinks "$out"
# manylinux_2_28: with this header present, libstdc++'s <ext/atomicity.h> makes every
# object need __libc_single_threaded@GLIBC_2.32.
rm -f "$out/usr/include/x86_64-linux-gnu/sys/single_threaded.h"
rm -rf "$out/usr/share/doc" "$out/usr/share/man" "$out/usr/share/info" "$out/usr/share/locale"
patch_elf_tree "$out/usr/bin"
patch_elf_tree "$out/usr/lib/gcc"
patch_elf_tree "$out/usr/libexec"
# gcc looks for as and ld beside cc1 before PATH: put them there.
for tool in as ld; do
  ln -s "../../../../bin/x86_64-linux-gnu-$tool" "$out/usr/lib/gcc/x86_64-linux-gnu/12/$tool"
done
mkdir -p "$out/bin"
# The wrappers add --sysroot always. Only when they link a program (CMake's try_run, a
# test binary) do they add the store ld.so and runtime libraries, so that it runs in the
# sandbox; shared objects (the kernel modules) get no store path at all.
for tool in gcc g++ cpp; do
  for name in $tool x86_64-linux-gnu-$tool; do
    cat > "$out/bin/$name" <<WRAPPER
#!$runtime/bin/bash
link=1
for arg in "\$@"; do
  case \$arg in -c|-S|-E|-M|-MM|-shared|--version|-v|-dumpversion|-dumpmachine|-print-*) link=0 ;; esac
done
if [ \$link = 1 ]; then
  exec $out/usr/bin/$tool-12 --sysroot=$out "\$@" -Wl,--dynamic-linker=$ld -Wl,-rpath,$runtime/lib
fi
exec $out/usr/bin/$tool-12 --sysroot=$out "\$@"
WRAPPER
    chmod +x "$out/bin/$name"
  done
done
ln -s g++ "$out/bin/c++"
ln -s gcc "$out/bin/cc"
for tool in as ld ld.bfd ar nm ranlib strip objcopy objdump readelf strings size c++filt; do
  ln -s "../usr/bin/x86_64-linux-gnu-$tool" "$out/bin/$tool"
done
printf 'int main(void) { return 0; }\n' > probe.c
"$out/bin/gcc" -O1 -c probe.c -o probe.o
echo "cc: $("$out/bin/gcc" --version | head -1)"
