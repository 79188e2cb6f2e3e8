# Builder of checks.<variant>-tests: fails when the kernel's tests failed (pytest's exit 5,
# "no tests collected", passes, as upstream's runner accepts it).
set -eu
status=$(cat "$run/exit-code")
case $status in
  0|5) echo "$variant: kernel tests passed (pytest exit $status)" > "$out" ;;
  *)
    cat "$run/log" >&2
    echo "kernel-builder: $variant: kernel tests failed (pytest exit $status); full output: $run/log" >&2
    exit 1 ;;
esac
