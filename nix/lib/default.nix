# The builder library: small pure files (builtins only, no nixpkgs), joined here.
#
# Type: { builderSrc : flake source of kernel-builder } -> { genKernelFlakeOutputs, ... }
{ builderSrc }:
let
  context = import ./context.nix { inherit builderSrc; };
in
{
  # Type: { self, path, system ? "x86_64-linux", doChecks ? true } -> flake outputs
  # Example: kernel-builder.lib.genKernelFlakeOutputs { inherit self; path = ./.; }
  genKernelFlakeOutputs = import ./gen-flake-outputs.nix { inherit builderSrc context; };

  # Exposed for tests and tools.
  kernelConfig = import ./kernel-config.nix;
  inherit context;
}
