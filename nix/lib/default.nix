# The builder library: pure functions (pure/: builtins only, no derivations, no store paths)
# and the derivation builders that use them (builders/: derivations, their scripts, and the
# filtered sources they read), joined here.
#
# Type: { builderSrc : flake source of kernel-builder } -> { genKernelFlakeOutputs, ... }
{ builderSrc }:
let
  pure = import ./pure;
  context = import ./builders/context.nix { inherit builderSrc; };
in
{
  # Type: { self, path, system ? "x86_64-linux", toolchainProvider ? null } -> flake outputs
  # Example: kernel-builder.lib.genKernelFlakeOutputs { inherit self; path = ./.; }
  genKernelFlakeOutputs = import ./builders/gen-flake-outputs.nix { inherit builderSrc context pure; };

  # upstream's lib.allBuildVariantsJSON: the name of every bundle variant of the build sets,
  # as JSON { "<system>": { "<backend>": [ "<variant>", ... ] } } (pure/ci-outputs.nix).
  allBuildVariantsJSON = builtins.toJSON
    (pure.ciOutputs.allBuildVariants (builtins.fromJSON (builtins.readFile ../build-sets.json)));

  # Exposed for tests and tools.
  inherit (pure) kernelConfig;
  inherit context;
}
