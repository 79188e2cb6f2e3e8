# The pinned compiler, linking shared objects for manylinux_2_28 (see pinned.nix).
# Link stubs for glibc $glibcVersion: generated from the symbol lists in the ziglang wheel
# (glibc-stubs.py), assembled and linked with the toolchain's binutils, one per library
# with its soname and version nodes. lib/libc.so and lib/libm.so are linker scripts like
# the sysroot's, naming the stubs (and, as needed, the libraries that glibc 2.34 merged
# into libc, so code written for a newer glibc still links without -lpthread/-ldl); the
# sysroot's libc_nonshared.a and libmvec stay. bin/ holds the compiler wrappers and
# links to the rest of $cc/bin. One script for every target: $triple (x86_64-linux-gnu, or
# aarch64-linux-gnu for the cross compiler), its ld.so $ldSo, BFD format $ldFormat, the
# sysroot's library directory $sysrootLib and glibc's first symbol version $baseVersion.
source "$libSh"
lib="$out/lib" share="$out/share/glibc-$glibcVersion"
mkdir -p "$lib" "$share" "$out/bin" "$out/libexec" stubs
"$python/usr/bin/python3.11" "$generator" "$ziglang" "$triple" "$glibcVersion" stubs
cp stubs/missing.txt "$share/missing.txt"
for source in stubs/*.s; do
  soname=${source##*/}
  soname=${soname%.s}
  "$cc/bin/as" -o "stubs/$soname.o" "$source"
  "$cc/bin/ld" -shared --build-id=none -soname "$soname" --version-script "stubs/$soname.map" \
    -o "$lib/$soname" "stubs/$soname.o"
done
sysroot="$cc/$sysrootLib"
merged=""
for soname in "$ldSo" libpthread.so.0 libdl.so.2 librt.so.1 libutil.so.1 libresolv.so.2; do
  merged="$merged $lib/$soname"
done
printf '/* GNU ld script: glibc %s link stubs */\nOUTPUT_FORMAT(%s)\nGROUP ( %s %s AS_NEEDED (%s ) )\n' \
  "$glibcVersion" "$ldFormat" "$lib/libc.so.6" "$sysroot/libc_nonshared.a" "$merged" > "$lib/libc.so"
# libmvec: x86_64's glibc has it; aarch64's only from glibc 2.38 on (none in the sysroot).
if [ -e "$sysroot/libmvec.so" ]; then
  printf '/* GNU ld script: glibc %s link stubs */\nOUTPUT_FORMAT(%s)\nGROUP ( %s AS_NEEDED ( %s ) )\n' \
    "$glibcVersion" "$ldFormat" "$lib/libm.so.6" "$sysroot/libmvec.so" > "$lib/libm.so"
else
  printf '/* GNU ld script: glibc %s link stubs */\nOUTPUT_FORMAT(%s)\nGROUP ( %s )\n' \
    "$glibcVersion" "$ldFormat" "$lib/libm.so.6" > "$lib/libm.so"
fi
for soname in libpthread.so.0 libdl.so.2 librt.so.1 libutil.so.1 libresolv.so.2; do
  ln -s "$soname" "$lib/${soname%.so.*}.so"
done
fill() {
  sed -e "s|@bash@|$runtime/bin/bash|g" -e "s|@runtime@|$runtime|g" -e "s|@cc@|$cc|g" \
    -e "s|@out@|$out|g" -e "s|@glibc@|$glibcVersion|g" -e "s|@tool@|$2|g" "$1"
}
fill "$checkScript" "" > "$out/libexec/check-glibc-link"
chmod +x "$out/libexec/check-glibc-link"
for tool in "$cc"/bin/*; do
  name=${tool##*/}
  case $name in
    gcc|g++|cc|c++|"$triple-gcc"|"$triple-g++")
      fill "$wrapper" "$name" > "$out/bin/$name"
      chmod +x "$out/bin/$name" ;;
    *) ln -s "$tool" "$out/bin/$name" ;;
  esac
done
# Self-test: dlsym and pthread_create bind to glibc 2.28's versions; stat (2.33) is refused.
cat > probe.c <<'C'
#include <dlfcn.h>
#include <pthread.h>
static void *run(void *arg) { return arg; }
int probe(void) { pthread_t t; pthread_create(&t, 0, run, 0); return dlsym(RTLD_DEFAULT, "malloc") != 0; }
C
"$out/bin/gcc" -shared -fPIC -O1 probe.c -o probe.so
"$cc/bin/readelf" --dyn-syms -W probe.so > probe.syms
grep -q "UND dlsym@GLIBC_$baseVersion" probe.syms
grep -q "UND pthread_create@GLIBC_$baseVersion" probe.syms
printf '#include <sys/stat.h>\nint probe(const char *p) { struct stat s; return stat(p, &s); }\n' > refused.c
if "$out/bin/gcc" -shared -fPIC refused.c -o refused.so 2> refused.log || ! grep -q "'stat'" refused.log; then
  cat refused.log
  echo "glibc stubs: a call to stat (glibc 2.33) linked" >&2
  exit 1
fi
echo "glibc $glibcVersion link stubs: $(ls "$lib" | tr '\n' ' ')"
