# The pinned provider: hermetic toolchains made only of store paths.
#
# Every Debian package and wheel in nix/toolchain-lock.json is a fixed-output derivation
# (builtin:fetchurl, flat sha256): an online Nix fetches it from its public URL, an
# offline one finds it in the store after `kernel-builder toolchain fetch` (same path).
# From those, with the seed busybox as the first builder:
#   runtime  flat runtime libraries + bash, patchelf and the busybox applets
#   cc       gcc 12 + binutils + sysroot in one tree, wrappers that pass --sysroot
#   ccLink   cc's wrappers again, linking shared objects against glibc 2.28 link stubs
#            (manylinux_2_28 symbol versions; see docs/nix.md)
#   python   CPython 3.11 from Debian, patched to run from the store
#   env-*    a venv over that Python with one environment's wheels (pip, offline)
# The variant derivation then runs under bash from `runtime` with only these on PATH, so
# it builds inside the Nix sandbox. Same provider type as host.nix (see default.nix): the
# only file that looks inside pinned/ (parts.nix, cuda-compiler.nix).
{ recorded ? null, system }:
let
  parts = import ./pinned/parts.nix { inherit system; };
  inherit (parts) lock pinnedSets runtime cc ccLink python driver envs cudas seed testSite cross;
  # A native environment's CUDA compiler made from its CUDA wheels alone (per-object.nix
  # compiles CUDA units with it where they read the same files through it).
  cudaCompilerOf = import ./pinned/cuda-compiler.nix { inherit system parts; };
  # The systems whose toolchains the lock pins natively: its own and requests.hosts'.
  nativeSystems = [ lock.system ] ++ builtins.attrNames (lock.requests.hosts or { });
  notPinnedHere = missing "the pinned toolchains are for ${builtins.concatStringsSep " and " nativeSystems}, not ${system}";

  missing = import ./unavailable.nix;

  # A build set of another system (aarch64-linux) built here: an x86_64 derivation whose
  # compiler, torch and glibc stubs are the target's (parts.cross), while CMake, Ninja and
  # the build Python (its torch says the version and ABI) are the native environment of
  # the same build set. CMAKE_TOOLCHAIN_FILE carries the cross settings to CMake, and
  # KERNEL_BUILDER_TARGET_SYSTEM tells the driver which machine the module is for.
  crossFor = buildSet: targetSystem: nativeName:
    let
      target = cross.${targetSystem} or null;
      envName = if target == null then null else target.buildSets.${buildSet.key} or null;
    in
    if !parts.native then notPinnedHere
    else if target == null then
      missing "no pinned toolchain builds ${targetSystem} variants on ${system} (nix/toolchain-lock.json requests.targets: ${builtins.concatStringsSep ", " (builtins.attrNames cross)})"
    else if envName == null then
      missing "build set ${buildSet.key} is not pinned for ${targetSystem} in nix/toolchain-lock.json (requests.targets.${targetSystem}.buildSets: ${builtins.concatStringsSep ", " (builtins.attrNames target.buildSets)})"
    else if nativeName == null then
      missing "build set ${buildSet.key} is pinned for ${targetSystem} but not for ${system} (requests.buildSets), whose environment runs CMake for it"
    else
      let
        native = envs.${nativeName};
        env = target.envs.${envName};
        # A CUDA build of the target's torch needs CUDA found even for CPU variants (as on
        # x86_64): x86_64 nvcc, the target's CUDA libraries, the cross g++ as its host compiler.
        cudaHome = target.cudaOf envName nativeName;
        prefixMaps = builtins.concatStringsSep " " [
          "-ffile-prefix-map=${env}=/kernel-builder/env"
          "-ffile-prefix-map=${native}=/kernel-builder/build-env"
          "-ffile-prefix-map=${target.cc}=/kernel-builder/cc"
          "-ffile-prefix-map=${python}=/kernel-builder/python"
        ] + (if cudaHome != null then " -ffile-prefix-map=${cudaHome}=/kernel-builder/cuda" else "");
      in
      {
        available = true;
        reason = "";
        builder = "${runtime}/bin/bash";
        driverPython = "${driver}/bin/python";
        toolchainPython = "${native}/bin/python";
        env = {
          PATH = builtins.concatStringsSep ":" ([ "${target.ccLink}/bin" "${native}/bin" ]
            ++ (if cudaHome != null then [ "${cudaHome}/bin" ] else [ ]) ++ [ "${runtime}/bin" ]);
          CC = "${target.ccLink}/bin/gcc";
          CXX = "${target.ccLink}/bin/g++";
          CMAKE_TOOLCHAIN_FILE = "${env}/toolchain.cmake";
          KERNEL_BUILDER_TARGET_SYSTEM = targetSystem;
          KERNEL_BUILDER_PREFIX_MAPS = prefixMaps;
          KERNEL_BUILDER_STRICT_MANYLINUX = "1";
          sandboxShell = "${runtime}/bin/bash";
        } // (if cudaHome != null then {
          CUDA_HOME = cudaHome;
          CUDAToolkit_ROOT = cudaHome;
          CUDA_TOOLKIT_ROOT = cudaHome; # torch's FindCUDA, cross-compiling, reads this one
          CUDAHOSTCXX = "${target.ccLink}/bin/g++";
        } else { });
        identity = { toolchainProvider = "pinned"; toolchainEnv = envName; toolchainTarget = targetSystem; };
        # The target's Python under qemu, for the import check (null: the lock pins none, and
        # the module is built and ABI-checked but not imported). variant.nix hands it to the
        # variant step only: plans, objects and links never wait for it.
        emulatedPython = let emulated = target.emulated.${envName}; in
          if emulated == null then null else "${emulated}/bin/python";
        parts = { inherit runtime python driver env seed; cc = target.cc; ccLink = target.ccLink; cuda = cudaHome; emulated = target.emulated.${envName}; };
        testSite = _: null;
      };

  toolchainFor = buildSet:
    let
      envName = pinnedSets.${buildSet.key} or null;
      targetSystem = buildSet.system or system;
    in
    if targetSystem != system then
      crossFor buildSet targetSystem envName
    else if !parts.native then notPinnedHere
    else if envName == null then
      missing "build set ${buildSet.key} is not in the toolchain lock nix/toolchain-lock.json (pinned: ${builtins.concatStringsSep ", " (builtins.attrNames pinnedSets)}); `kernel-builder list-variants` says where its torch is published and how to pin it"
    else
    let
      env = envs.${envName};
      cudaHome = cudas.${envName};
      # Store paths must not leak into the built modules (assert messages, __FILE__):
      # they would become references of the variant and tie it to this toolchain.
      prefixMaps = builtins.concatStringsSep " " [
        "-ffile-prefix-map=${env}=/kernel-builder/env"
        "-ffile-prefix-map=${cc}=/kernel-builder/cc"
        "-ffile-prefix-map=${python}=/kernel-builder/python"
      ] + (if cudaHome != null then " -ffile-prefix-map=${cudaHome}=/kernel-builder/cuda" else "");
    in
    {
      available = true;
      reason = "";
      builder = "${runtime}/bin/bash";
      driverPython = "${driver}/bin/python";
      toolchainPython = "${env}/bin/python";
      env = {
        PATH = builtins.concatStringsSep ":" ([ "${ccLink}/bin" "${env}/bin" ]
          ++ (if cudaHome != null then [ "${cudaHome}/bin" ] else [ ]) ++ [ "${runtime}/bin" ]);
        CC = "${ccLink}/bin/gcc";
        CXX = "${ccLink}/bin/g++";
        KERNEL_BUILDER_PREFIX_MAPS = prefixMaps;
        KERNEL_BUILDER_STRICT_MANYLINUX = "1";
        sandboxShell = "${runtime}/bin/bash";
      } // (if cudaHome != null then {
        CUDA_HOME = cudaHome;
        CUDAToolkit_ROOT = cudaHome;
        CUDAHOSTCXX = "${ccLink}/bin/g++";
      } else { });
      identity = { toolchainProvider = "pinned"; toolchainEnv = envName; };
      parts = { inherit runtime cc ccLink python driver env seed; cuda = cudaHome; };
      # The kernel-test packages' site-packages for this environment (null: none needed).
      testSite = testSite envName;
      cudaCompiler = if cudaHome == null then null else cudaCompilerOf envName;
    };
in
{
  name = "pinned";
  inherit toolchainFor;
  unavailable = missing;
  # The systems whose arch variants are cross-built here (requests.targets: aarch64-linux
  # on x86_64-linux), and the other systems pinned natively (the lock's own and
  # requests.hosts: each has outputs of its own, evaluated for that system).
  crossSystems = builtins.filter (s: s != system) (builtins.attrNames (lock.requests.targets or { }));
  nativeSystems = builtins.filter (s: s != system) nativeSystems;
  # What the lock pins besides the toolchains (see default.nix).
  cppHeaders = parts.wheelHeaders;
  inherit (parts) importCheckPaths rust checkPackages;
  cli = { shell = "${runtime}/bin/bash"; PATH = "${runtime}/bin"; python = "${parts.cli}/bin/python"; };
}
