# A kernel's own tests (its tests/ directory) against one built variant, in the sandbox.
#
# `run` runs pytest with the variant's toolchain Python, the kernel-test packages
# (pytest, numpy, kernels and the flake's pythonCheckInputs, from the pinned lock) and the
# variant importable two ways: `import <name>` (the variant directory as that package) and
# get_local_kernel / LOCAL_KERNELS / KERNEL_BUILD_DIR pointing at the built tree. It always
# succeeds and records the outcome (kernel-tests-runner.py: each test's and the whole run's
# time limit, a capped log, the run judged by its JUnit record, a crashing or hanging test
# named), so that `kernel-builder test` can show what failed; `check`
# (checks.<variant>-tests) fails when the run did not pass. Tests that need a GPU are
# reported skipped where none is (see kernel_tests_gpu.py), never passed.
#
# Type: { config; system; variant; tree; toolchain; tests; packages; testSite; select ? null; testArgs ? { } } -> { run; check; }
# (`select`: pytest's -k expression, from `kernel-builder test -k`; `testArgs.testTimeout`
# and `testArgs.runTimeout`: the limits in seconds, from `kernel-builder test --test-timeout
# / --run-timeout`)
{ config, system, variant, tree, toolchain, tests, packages, testSite, select ? null, testArgs ? { } }:
let
  run = derivation (import ./test-env.nix { inherit config system variant tree toolchain testSite; } // {
    name = "${config.name}-${variant}-tests";
    inherit tests;
    args = [ ./kernel-tests-builder.sh ];
    runner = ./kernel-tests-runner.py;
    watchPlugin = ./kernel-tests-watch.py;
    testTimeout = toString (testArgs.testTimeout or 600);
    runTimeout = toString (testArgs.runTimeout or 3600);
    # the kernel-test packages asked for (their wheels are in testSite, pinned provider)
    checkInputs = map (p: p.pname) packages;
  } // (if select == null then { } else { pytestSelect = select; }));
  check = derivation {
    name = "${config.name}-${variant}-tests-check";
    inherit system variant run;
    builder = toolchain.builder;
    args = [ ./kernel-tests-check.sh ];
    PATH = toolchain.env.PATH;
  };
in
{ inherit run check; }
