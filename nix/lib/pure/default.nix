# The pure half of the library: builtins only, no derivations and no store paths, so every
# function here evaluates (and is tested, ../tests) without building or copying anything.
# The derivation builders in ../builders take this set as `pure`; ../default.nix joins both.
#
# Type: { versions; backends; names; languages; matrix; inputs; kernelConfig; kernelIdentity; variantRecords; torchVersions; flakeArgs; ciOutputs; }
{
  versions = import ./versions.nix;
  backends = import ./backends.nix;
  names = import ./names.nix;
  languages = import ./languages.nix;
  matrix = import ./matrix.nix;
  inputs = import ./inputs.nix;
  kernelConfig = import ./kernel-config.nix;
  kernelIdentity = import ./kernel-identity.nix;
  variantRecords = import ./variant-records.nix;
  torchVersions = import ./torch-versions.nix;
  flakeArgs = import ./flake-args.nix;
  ciOutputs = import ./ci-outputs.nix;
}
