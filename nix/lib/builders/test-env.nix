# What a variant's kernel tests see, the same for the sandboxed runs (kernel-tests.nix) and the
# test shell (test-shell.nix): the variant's toolchain environment, the built tree, and the
# names and paths both read (the import name, the repo id that LOCAL_KERNELS maps, the site of
# the kernel-test packages, the GPU plugin). One attribute set, so that a shell never sees the
# variant otherwise than a run does.
#
# Type: { config; system; variant; tree; toolchain; testSite } -> attrset (derivation arguments)
{ config, system, variant, tree, toolchain, testSite }:
toolchain.env // {
  inherit system variant tree;
  builder = toolchain.builder;
  outputs = [ "out" ];
  inherit (toolchain) toolchainPython;
  pythonName = config.pythonName;
  repoId = if config.hubRepoId == null then "" else config.hubRepoId;
  testSite = if testSite == null then "" else testSite;
  gpuPlugin = ./kernel_tests_gpu.py;
  # makes `import <pythonName>` give the variant, files or zip layout (variant-package.py)
  variantPackage = ./variant-package.py;
}
# The locked kernel-depends in the store as LOCAL_KERNELS entries (kernel-deps.nix); only
# for a kernel that has them, so that no other kernel's test derivations change.
// (if (config.kernelDepsLocal or "") != "" then { kernelDepsLocal = config.kernelDepsLocal; } else { })
