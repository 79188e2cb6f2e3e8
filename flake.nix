# kernel-builder: build PyTorch kernels for every torch x backend variant.
#
# This flake has no inputs (nixpkgs cannot be fetched offline); it only offers a library.
# A kernel's flake.nix calls it:
#
#   {
#     inputs.kernel-builder.url = "git+https://github.com/<org>/kernel-builder";
#     outputs = { self, kernel-builder }:
#       kernel-builder.lib.genKernelFlakeOutputs { inherit self; path = ./.; };
#   }
#
# `kernel-builder build` overrides the `kernel-builder` input with a fresh copy of this
# checkout plus the recorded toolchain (see docs/nix.md), so builds never use a stale lock.
{
  description = "kernel-builder: Nix derivations for every variant of a PyTorch kernel";

  outputs = { self }: {
    lib = import ./nix/lib { builderSrc = self; };
  };
}
