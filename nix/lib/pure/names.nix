# Variant names (docs/variants.md): the Nix half of python/kernel_builder/variants/names.py.
# Only formatting lives here; parsing is the loader's job and stays in Python.
let
  versions = import ./versions.nix;
  # the versioned backends' prefixes (cuda = "cu"), from the backend table (backends.json)
  inherit (import ./backends.nix) prefixes;
in
rec {
  /* The compute part of an arch name for a build set.

     Type: compute :: { backend, backendVersion ? null, ... } -> string

     Example:
       compute { backend = "cuda"; backendVersion = "13.0"; }
       => "cu130"
  */
  compute =
    # a build set (only backend and backendVersion are read)
    buildSet:
    let
      b = buildSet.backend;
    in
    if prefixes ? ${b} then
      (if (buildSet.backendVersion or null) == null
        then throw "kernel-builder: build set for backend ${b} has no backendVersion"
        else prefixes.${b} + versions.flatten buildSet.backendVersion)
    else b;

  /* `torch<MM>[-cxx11]-<compute>-<system>`.

     Type: torchName :: { torch, backend, system, cxx11 ? true, ... } -> string

     Example:
       torchName { torch = "2.13"; backend = "cpu"; system = "x86_64-linux"; cxx11 = true; }
       => "torch213-cxx11-cpu-x86_64-linux"
  */
  torchName =
    # a build set with a single system
    buildSet:
    let
      isLinux = builtins.match ".*-linux" buildSet.system != null;
      tag = if (buildSet.cxx11 or true) && isLinux then "-cxx11" else "";
    in "torch${versions.flatten buildSet.torch}${tag}-${compute buildSet}-${buildSet.system}";

  /* `torch-stable-abi<MM>-<compute>-<system>`.

     Type: stableAbiName :: string -> buildSet -> string

     Example:
       stableAbiName "2.11" { backend = "cuda"; backendVersion = "12.6"; system = "x86_64-linux"; }
       => "torch-stable-abi211-cu126-x86_64-linux"
  */
  stableAbiName =
    # the stable ABI version
    abi:
    # a build set with a single system
    buildSet: "torch-stable-abi${versions.flatten abi}-${compute buildSet}-${buildSet.system}";

  /* `tvm-ffi<MM>-<compute>-<system>` from the build set's tvmFfi version.

     Type: tvmFfiName :: buildSet -> string

     Example:
       tvmFfiName { tvmFfi = "0.1"; backend = "cuda"; backendVersion = "12.6"; system = "x86_64-linux"; }
       => "tvm-ffi01-cu126-x86_64-linux"
  */
  tvmFfiName =
    # a build set with tvmFfi and a single system
    buildSet: "tvm-ffi${versions.flatten buildSet.tvmFfi}-${compute buildSet}-${buildSet.system}";

  /* `torch-<backend>`: a noarch variant.

     Type: noarchName :: string -> string

     Example:
       noarchName "cuda"
       => "torch-cuda"
  */
  noarchName =
    # a backend name
    backend: "torch-${backend}";

  /* The noarch name of an `[mlx-noarch]` kernel: `mlx-<backend>`.

     Type: mlxName :: string -> string

     Example:
       mlxName "metal"
       => "mlx-metal"
  */
  mlxName =
    # a backend name
    backend: "mlx-${backend}";
}
