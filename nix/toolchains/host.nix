# The host provider: the compilers, nvcc and Python environments of this machine, as
# recorded by `kernel-builder toolchain discover` (not hermetic: the build uses whatever
# those paths hold; the recorded versions and hashes make any change rebuild).
#
# What the host toolchain does not record (C++ dependency headers, the import check's and
# the kernel tests' packages, Rust, the CLI's Python) is the lock's, as for the pinned
# provider: those answers are pinned.nix's.
{ recorded, system }:
let
  missing = import ./unavailable.nix;
  pinned = import ./pinned.nix { inherit system; };
  toolchainFor = buildSet:
    let
      sets = if recorded == null then { } else recorded.build-sets or { };
      entry = sets.${buildSet.key} or null;
      isCuda = buildSet.backend == "cuda";
      cuda = recorded.cuda or null;
      # A CUDA build of torch needs the CUDA toolkit even for its CPU variants (its CMake
      # package looks for it), so those get nvcc too, and nvcc becomes part of their identity.
      needsCuda = isCuda || (entry != null && (entry.torch-cuda or "") != "" && cuda != null);
      binDirs = [ entry.env-bin recorded.driver.bin ]
        ++ (if needsCuda then [ "${cuda.home}/bin" ] else [ ])
        ++ [ "/usr/local/bin" "/usr/bin" "/bin" ];
    in
    if recorded == null then
      missing "no toolchain recorded; run `kernel-builder toolchain discover` (or build with `kernel-builder build`, which does)"
    else if (buildSet.system or system) != system then
      missing "the host toolchain builds only ${system} variants, not ${buildSet.system} ones (the pinned toolchains cross-build them)"
    else if (recorded.system or system) != system then
      missing "the recorded toolchain is for ${recorded.system}, not ${system}"
    else if entry == null then
      missing "no Python environment with torch ${buildSet.torch}${if isCuda then " (CUDA ${buildSet.backendVersion})" else ""} was discovered on this machine; run `kernel-builder toolchain setup` or `kernel-builder toolchain discover --python PATH`"
    else if isCuda && cuda == null then
      missing "no nvcc found on this machine for CUDA ${buildSet.backendVersion}"
    else {
      available = true;
      reason = "";
      builder = "/bin/bash";
      driverPython = recorded.driver.python;
      toolchainPython = entry.python;
      env = {
        PATH = builtins.concatStringsSep ":" binDirs;
      } // (if needsCuda then { CUDA_HOME = cuda.home; CUDAToolkit_ROOT = cuda.home; } else { });
      identity = {
        toolchainProvider = "host";
        toolchainPython = entry.python;
        torchVersion = entry.torch-version;
        torchRecordHash = entry.torch-record-hash;
        torchWheelHash = entry.torch-wheel-hash or "";
        cxxVersion = recorded.compiler.version;
        cmakeVersion = entry.cmake-version;
        ninjaVersion = entry.ninja-version;
        driverPython = recorded.driver.python;
      } // (if needsCuda then {
        nvccVersion = cuda.version;
        cudaHome = cuda.home;
      } else { });
    };
in
{
  name = "host";
  inherit toolchainFor;
  unavailable = missing;
  # the host toolchain builds this system's variants only
  crossSystems = [ ];
  nativeSystems = [ ];
  inherit (pinned) cppHeaders importCheckPaths rust checkPackages cli;
}
