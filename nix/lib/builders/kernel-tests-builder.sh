# Builder of a kernel-test run (see kernel-tests.nix). Records the run's outcome through
# kernel-tests-runner.py (time limits, capped log, judged by the JUnit record); never fails
# for a failing test (the check derivation does), only when it cannot run pytest.
set -euo pipefail
if [ ! -e /bin/sh ] && [ -n "${sandboxShell:-}" ]; then
  mkdir -p /bin && ln -s "$sandboxShell" /bin/sh
fi
export HOME="$NIX_BUILD_TOP/home"
mkdir -p "$HOME" "$out"
work="$NIX_BUILD_TOP/work"
mkdir -p "$work/import" "$work/plugin"
cp -r "$tests" "$work/tests"
chmod -R u+w "$work/tests"
# `import <name>` gives the variant, as upstream's test runner sets it up (a link to it; for
# a zip-layout variant a package that runs its archive: variant-package.py).
"$toolchainPython" "$variantPackage" "$tree/$variant" "$work/import/$pythonName"
cp "$gpuPlugin" "$work/plugin/kernel_tests_gpu.py"
cp "$watchPlugin" "$work/plugin/kernel_tests_watch.py"
path="$work/import:$work/plugin"
if [ -n "$testSite" ]; then
  path="$path:$testSite/site-packages"
  [ -d "$testSite/bin" ] && export PATH="$testSite/bin:$PATH"
fi
export PYTHONPATH="$path" PYTHONDONTWRITEBYTECODE=1 PYTHONNOUSERSITE=1
export KERNEL_BUILD_DIR="$tree" KERNEL_BUILDER_TEST_VARIANT="$variant"
# The kernel's repo and its locked kernel-depends (get_kernel_dep resolves them there).
local_kernels="${kernelDepsLocal:-}"
if [ -n "$repoId" ]; then
  local_kernels="$repoId=$tree${local_kernels:+:$local_kernels}"
fi
if [ -n "$local_kernels" ]; then
  export LOCAL_KERNELS="$local_kernels"
fi
cd "$work"
echo "kernel-builder: testing $variant with $toolchainPython"
select=()
if [ -n "${pytestSelect:-}" ]; then
  select=(-k "$pytestSelect")
fi
export KERNEL_TESTS_TEST_TIMEOUT="$testTimeout" KERNEL_TESTS_RUN_TIMEOUT="$runTimeout"
# --continue-on-collection-errors: a test module that fails to import is reported as the
# error it is, and the other modules still run (pytest's default stops the whole run there).
"$toolchainPython" "$runner" "$out" -- tests "${select[@]}" -p no:cacheprovider -p kernel_tests_gpu \
  -p kernel_tests_watch -rfEs --continue-on-collection-errors \
  --junitxml="$out/junit.xml" -o junit_family=xunit2
echo "$variant" > "$out/variant"
