# The outputs of a kernel flake, for one system (the machine's; raw derivations only run
# where they are built).
#
# Type: { builderSrc; context; pure } -> { self; path; system ? "x86_64-linux"; toolchainProvider ? null }
#       -> { packages; legacyPackages; devShells; checks; }
{ builderSrc, context, pure }:
{ self ? null
, path ? throw "kernel-builder: genKernelFlakeOutputs needs `path`: call it as kernel-builder.lib.genKernelFlakeOutputs { inherit self; path = ./.; }"
, system ? (if context.toolchain != null then context.toolchain.system else "x86_64-linux")
, toolchainProvider ? null
, ...
}:
let
  config = pure.kernelConfig path;
  buildSets = builtins.fromJSON (builtins.readFile (builderSrc.outPath + "/nix/build-sets.json"));
  records = pure.variantRecords.records buildSets config.toml system;
  providers = import ../../toolchains;
  # Pinned (hermetic) toolchains unless `kernel-builder build --toolchain host` recorded
  # this machine's toolchain in the builder input.
  providerName = if context.toolchain == null then "pinned" else context.toolchain.provider or "host";
  provider =
    if toolchainProvider != null then toolchainProvider
    else providers.${providerName} or (throw "kernel-builder: unknown toolchain provider ${providerName}; known: ${toString (builtins.attrNames providers)}");
  toolchainFor = provider { recorded = context.toolchain; inherit system; };
  kernel = pure.kernelIdentity { inherit self path; recorded = context.kernel; };

  sources = builtins.listToAttrs (map
    (backend: { name = backend; value = import ./source.nix { inherit pure path config backend; }; })
    config.backends);

  # The C++ dependencies (build.toml `depends`) and the import check's Python packages
  # (the loader's runtime dependencies and `python-depends`) of each backend's variants.
  cppDeps = import ./cpp-deps.nix { inherit builderSrc system; } config;
  pythonDeps = import ./python-deps.nix { inherit system; } config;
  depsOf = builtins.listToAttrs (map
    (backend:
      let cpp = cppDeps backend; py = pythonDeps backend; in
      {
        name = backend;
        value = {
          reason = if cpp.reason != null then cpp.reason else py.reason;
          attrs = cpp.attrs // py.attrs;
        };
      })
    config.backends);

  # A variant is buildable with the first of its build sets that has a toolchain, and
  # when every C++ dependency its backend's components declare is provided here.
  withToolchain = r:
    let
      tried = map (bs: { buildSet = bs; toolchain = toolchainFor bs; }) r.buildSets;
      usable = builtins.filter (t: t.toolchain.available) tried;
      pick = if usable != [ ] then builtins.head usable else builtins.head tried;
      deps = depsOf.${r.backend};
    in
    r // pick // (if deps.reason == null then { depAttrs = deps.attrs // narrowAttrs r; }
      else { depAttrs = { }; toolchain = import ../../toolchains/unavailable.nix deps.reason; });
  # `kernel-builder build --cuda-capabilities`: the CUDA arch variants build only those archs.
  narrowCuda = context.buildOptions.cudaCapabilities or [ ];
  narrowAttrs = r:
    if narrowCuda != [ ] && r.backend == "cuda" && r.kind != "noarch"
    then { KERNEL_BUILDER_CUDA_CAPABILITIES = builtins.concatStringsSep "," narrowCuda; }
    else { };
  variants = map withToolchain records;
  buildable = builtins.filter (v: v.toolchain.available) variants;

  mkVariant = extraAttrs: v: import ./variant.nix {
    inherit config system kernel;
    extraAttrs = v.depAttrs // extraAttrs;
    inherit (v) backend toolchain;
    variant = v.name;
    src = sources.${v.backend};
    pythonSrc = context.pythonSrc;
  };
  byName = f: vs: builtins.listToAttrs (map (v: { name = v.name; value = f v; }) vs);

  redistributable = byName (mkVariant { }) variants;
  bundleVariants = builtins.filter (v: v.bundle) buildable;
  # The shell the bundle and build-variants run with: the first buildable variant's
  # toolchain (store paths for the pinned provider).
  shell =
    if buildable == [ ] then { builder = "/bin/bash"; PATH = "/usr/bin:/bin"; driverPython = ""; }
    else let t = (builtins.head buildable).toolchain; in { inherit (t) builder driverPython; PATH = t.env.PATH; };
  bundle = import ./bundle.nix {
    inherit config system path context kernel shell;
    variants = map (v: { name = v.name; drv = redistributable.${v.name}; }) bundleVariants;
  };
  buildVariants = import ./build-variants.nix { inherit config system bundle shell; };
  devShells = byName
    (mkVariant {
      shellHook = ''
        echo "kernel-builder dev shell: ${config.name} ${"$"}{variant} (${"$"}{toolchainProvider} toolchain)" >&2
        echo "  toolchain python: $toolchainPython" >&2
        export PYTHONPATH="$kernelBuilderPython${"$"}{PYTHONPATH:+:$PYTHONPATH}"
      '';
      isDevShell = "1";
    })
    buildable;
  checks = byName
    (v: import ./check.nix {
      inherit config system;
      variant = v.name;
      drv = redistributable.${v.name};
      inherit (v) toolchain;
      pythonSrc = context.pythonFullSrc;
    })
    buildable;
  info = map
    (v: {
      inherit (v) name kind backend bundle;
      torch = v.buildSet.torch;
      backendVersion = v.buildSet.backendVersion or null;
      buildable = v.toolchain.available;
      reason = v.toolchain.reason;
      buildSet = v.buildSet.key;
      toolchainProvider = if v.toolchain.available then v.toolchain.identity.toolchainProvider else null;
      toolchainPython = if v.toolchain.available then v.toolchain.toolchainPython else null;
    })
    variants;
in
{
  packages.${system} = {
    default = bundle;
    inherit bundle;
    build-variants = buildVariants;
  };
  # Non-derivation values live here so that `nix flake check` passes; the CLI paths stay
  # `.#variants`, `.#redistributable.<variant>`.
  legacyPackages.${system} = {
    variants = map (v: v.name) variants;
    bundleVariants = map (v: v.name) (builtins.filter (v: v.bundle) variants);
    buildableVariants = map (v: v.name) buildable;
    # One record per variant, in matrix order: what the CLI selects from.
    variantTable = info;
    inherit redistributable bundle;
    # The filtered source each backend's variants see (for inspection and tests).
    inherit sources;
    kernelIdentity = kernel;
    build-variants = buildVariants;
  };
  devShells = { ${system} = devShells // (if buildable == [ ] then { } else { default = devShells.${(builtins.head buildable).name}; }); };
  checks = { ${system} = checks; };
}
