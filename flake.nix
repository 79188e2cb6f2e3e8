# kernel-builder: build PyTorch kernels for every torch x backend variant.
#
# This flake has no inputs (nixpkgs cannot be fetched offline). It offers the library a
# kernel's flake.nix calls, and the CLI as a package:
#
#   {
#     inputs.kernel-builder.url = "git+https://github.com/<org>/kernel-builder";
#     outputs = { self, kernel-builder }:
#       kernel-builder.lib.genKernelFlakeOutputs { inherit self; path = ./.; };
#   }
#
#   nix run <this flake>#kernel-builder -- build .
#
# Variants are built with the pinned toolchains of nix/toolchain-lock.json inside the Nix
# sandbox (see docs/nix.md); `kernel-builder toolchain fetch` seeds an offline store.
{
  description = "kernel-builder: Nix derivations for every variant of a PyTorch kernel";

  outputs = { self }: {
    lib = import ./nix/lib { builderSrc = self; };
    packages.x86_64-linux = rec {
      kernel-builder = import ./nix/cli-package.nix { builderSrc = self; system = "x86_64-linux"; };
      default = kernel-builder;
    };
    # a native aarch64-linux host's CLI (requests.hosts of nix/toolchain-lock.json)
    packages.aarch64-linux = rec {
      kernel-builder = import ./nix/cli-package.nix { builderSrc = self; system = "aarch64-linux"; };
      default = kernel-builder;
    };
  };
}
