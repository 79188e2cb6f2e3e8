#!@bash@
# @tool@ of the pinned toolchain, linking for manylinux_2_28: a shared object (a kernel
# module) links against glibc @glibc@'s symbol versions (the stubs in @out@/lib), so it
# binds dlsym, pthread_create, ... to the versions glibc @glibc@ exports; a program (CMake's
# checks, test binaries) links against the sysroot's glibc, because it runs here.
real=@cc@/bin/@tool@
link=1 shared=0
for arg in "$@"; do
  case $arg in
    -c|-S|-E|-M|-MM|--version|-v|-dumpversion|-dumpmachine|-print-*) link=0 ;;
    -shared) shared=1 ;;
  esac
done
if [ $link = 0 ] || [ $shared = 0 ]; then
  exec "$real" "$@"
fi
"$real" -L@out@/lib "$@" || exit
output=a.out next=0
for arg in "$@"; do
  if [ $next = 1 ]; then output=$arg next=0; continue; fi
  case $arg in -o) next=1 ;; -o*) output=${arg#-o} ;; esac
done
exec @out@/libexec/check-glibc-link "$output" "$@"
