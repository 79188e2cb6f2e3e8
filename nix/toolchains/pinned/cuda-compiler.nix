# The CUDA compiler of one pinned environment, made from its CUDA wheels alone: nvcc
# (bin/), CUDA's runtime headers and libraries, crt, CCCL and NVVM, in the layout nvcc
# expects (TOP = bin/..). Its inputs are those wheels (fixed-output, by hash) and nothing of
# the torch environment, so the environments of several torch versions that pin the same
# CUDA wheels have one compiler, one store path. The toolchain's CUDA home (cuda-builder.sh)
# is the environment's own (its libraries, for CMake and the link); the deps step
# (driver/unitdeps.py) compiles a unit with this one instead where every file the unit
# reads through the home is byte for byte the same here, so a torch-free CUDA unit's object
# is every torch version's. null when the environment pins no CUDA.
#
# pinned.nix hands it to the variant steps as a toolchain's `cudaCompiler`.
#
# Type: { system; parts : parts.nix of system } -> string (environment name) -> derivation | null
{ system, parts }:
let
  # the same fixed-output derivations as the toolchain's, one store path per artifact
  inherit (parts) lock runtime fetchArtifact;
  compiles = key: builtins.match "(nvidia_cuda_nvcc|nvidia_cuda_crt|nvidia_cuda_cccl|nvidia_cuda_runtime|nvidia_nvvm)-.*" key != null;
in
envName:
let
  version = (lock.requests.cuda or { }).${envName} or null;
  keys = builtins.filter compiles (lock.groups."env:${envName}" or [ ]);
in
if version == null || keys == [ ] || system != lock.system then null
else derivation {
  name = "kb-cuda${version}-compiler";
  inherit system runtime;
  builder = "${runtime}/bin/bash";
  args = [ "-e" ./cuda-compiler-builder.sh ];
  libSh = ./lib.sh;
  wheels = map fetchArtifact keys;
}
