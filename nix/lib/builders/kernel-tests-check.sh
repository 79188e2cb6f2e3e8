# Builder of checks.<variant>-tests: fails unless the kernel-test run passed, as judged by
# kernel-tests-runner.py (its JUnit record complete, no failure or error; pytest's exit 5,
# "no tests collected", passes, as upstream's runner accepts it).
set -eu
status=$(cat "$run/status")
case $status in
  passed) echo "$variant: kernel tests passed" > "$out" ;;
  *)
    cat "$run/log" >&2
    echo "kernel-builder: $variant: kernel tests $status: $(cat "$run/outcome.json"); full output: $run/log" >&2
    exit 1 ;;
esac
