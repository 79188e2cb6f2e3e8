# A variant's test shell (`nix develop .#devShells.<sys>.test`, `testShells.<variant>`,
# `kernel-builder testshell`): the variant's toolchain, the built variant importable as the
# kernel-test runs see it (`import <name>`, KERNEL_BUILD_DIR, LOCAL_KERNELS) and the
# kernel-test packages (pytest on PATH), and pytest loads the kernel-test plugin as in the runs
# (GPU tests skipped without a GPU; a CPU variant found by PyPI kernels under a CUDA build of
# torch). `nix develop` builds the variant first.
#
# Type: { config; system; variant; tree; toolchain; testSite } -> derivation
{ config, system, variant, tree, toolchain, testSite }:
derivation (import ./test-env.nix { inherit config system variant tree toolchain testSite; } // {
  name = "${config.name}-${variant}-test-shell";
  args = [ "-c" "echo 'a test shell is entered with nix develop, not built' > $out" ];
  shellHook = ''
    kb_import=$(mktemp -d)
    "$toolchainPython" "$variantPackage" "$tree/$variant" "$kb_import/$pythonName"
    cp "$gpuPlugin" "$kb_import/kernel_tests_gpu.py"
    export PYTEST_PLUGINS=kernel_tests_gpu KERNEL_BUILDER_TEST_VARIANT="$variant"
    if [ -n "$testSite" ]; then
      export PATH="$testSite/bin:$PATH"
      export PYTHONPATH="$kb_import:$testSite/site-packages"
    else
      export PYTHONPATH="$kb_import"
    fi
    export KERNEL_BUILD_DIR="$tree"
    kb_local="''${kernelDepsLocal:-}"
    if [ -n "$repoId" ]; then kb_local="$repoId=$tree''${kb_local:+:$kb_local}"; fi
    if [ -n "$kb_local" ]; then export LOCAL_KERNELS="$kb_local"; fi
    echo "kernel-builder test shell: ${config.name} $variant (import $pythonName; python: $toolchainPython)" >&2
  '';
})
