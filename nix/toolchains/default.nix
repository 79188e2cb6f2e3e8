# Toolchain providers, one file each. A provider turns a build set into what the variant
# derivation needs, and answers every other question a kernel flake has about its
# toolchains; the matrix, the derivations and gen-flake-outputs.nix never look inside a
# toolchain (only the files here read pinned/: parts.nix, cuda-compiler.nix).
#
# Provider type:
#   { recorded : parsed toolchain JSON or null; system : string } -> {
#     name : string;                          "pinned", "host", "custom"
#     toolchainFor : buildSet : { key; torch; backend; backendVersion; system? } -> toolchain;
#     unavailable : string -> toolchain;      a toolchain that is not there, with the reason
#     crossSystems : [ string ];              other systems whose arch variants are built here
#     nativeSystems : [ string ];             other systems with outputs of their own
#     cppHeaders : name -> [ include dir ] -> derivation;   a C++ dependency's headers
#     importCheckPaths : attrs of string;     site-packages of each import-check set
#     rust : derivation | null;               rustc and cargo for rust-cpu components
#     checkPackages : attrs of check package; pythonCheckInputs' package set
#     cli : { shell; PATH; python; };         what runs the kernel-builder CLI package
#   }
#
# Toolchain type:
#   { available : bool; reason : string; builder : bash to run builders with;
#     driverPython; toolchainPython; env : attrs of strings (PATH, CUDA_HOME, ...);
#     identity : attrs of strings (with toolchainProvider);
#     testSite (optional) : [check package] -> site-packages drv | null;
#     parts (optional) : its store paths by name (upstream's `pkgs` output);
#     emulatedPython (optional) : the target's Python of a cross toolchain;
#     cudaCompiler (optional) : the CUDA compiler of the wheels alone (per-object.nix) | null }
#   (testSite: where the kernel-test packages come from; without it the kernel's tests
#   run with the toolchain Python as it is, which must have pytest.)
#
# `identity` goes into the derivation verbatim: any change in it rebuilds the variant,
# nothing outside it does.
let
  providers = {
    host = import ./host.nix;
    pinned = import ./pinned.nix;
  };
in
providers // {
  # The provider of a kernel flake: the one named (`kernel-builder build --toolchain`,
  # recorded in the builder input), or the flake's own `toolchainProvider` function, which
  # answers only `toolchainFor` (`{ recorded, system }: buildSet: toolchain`); the lock
  # answers the rest, and nothing is cross-built or built for another system with it.
  #
  # Type: { name : string; recorded; system; custom : function | null } -> provider
  select = { name, recorded, system, custom ? null }:
    if custom != null then
      providers.pinned { inherit system; } // {
        name = "custom";
        toolchainFor = custom { inherit recorded system; };
        crossSystems = [ ];
        nativeSystems = [ ];
      }
    else (providers.${name} or (throw "kernel-builder: unknown toolchain provider ${name}; known: ${toString (builtins.attrNames providers)}"))
      { inherit recorded system; };
}
