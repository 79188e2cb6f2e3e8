# A kernel's own tests (its tests/ directory) against one built variant, in the sandbox.
#
# `run` runs pytest with the variant's toolchain Python, the kernel-test packages
# (pytest, numpy, kernels and the flake's pythonCheckInputs, from the pinned lock) and the
# variant importable two ways: `import <name>` (the variant directory as that package) and
# get_local_kernel / LOCAL_KERNELS / KERNEL_BUILD_DIR pointing at the built tree. It always
# succeeds and records pytest's exit code, its output and a JUnit report, so that
# `kernel-builder test` can show what failed; `check` (checks.<variant>-tests) fails when
# pytest did. Tests that need a GPU are reported skipped where none is (see
# kernel_tests_gpu.py), never passed.
#
# Type: { config; system; variant; tree; toolchain; tests; packages; testSite; select ? null } -> { run; check; }
# (`select`: pytest's -k expression, from `kernel-builder test -k`)
{ config, system, variant, tree, toolchain, tests, packages, testSite, select ? null }:
let
  run = derivation (import ./test-env.nix { inherit config system variant tree toolchain testSite; } // {
    name = "${config.name}-${variant}-tests";
    inherit tests;
    args = [ ./kernel-tests-builder.sh ];
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
