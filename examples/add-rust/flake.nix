{
  description = "A kernel built with kernel-builder";
  inputs.kernel-builder.url = "path:../..";
  # The output names are spelled out rather than taken from the library's result: Nix
  # 2.26 finds a relative `path:` input's source through this flake's outputs, so outputs
  # that need the input just to exist recurse forever ("stack overflow; max-call-depth
  # exceeded"). Each value is still the library's (docs/nix.md, "Nix versions").
  outputs = { self, kernel-builder }:
    let kernel = kernel-builder.lib.genKernelFlakeOutputs { inherit self; path = ./.; };
    in { inherit (kernel) packages legacyPackages devShells checks; };
}
