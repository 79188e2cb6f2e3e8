# The variants of a kernel flake for one system, each with the toolchain that builds it:
# the matrix of this system (pure/variant-records.nix), then the arch variants of the
# systems the provider cross-builds here, each given the first of its build sets that has
# a toolchain, and unbuildable (with the reason) when a C++ dependency or python-depends
# of its backend is not provided here (cpp-deps.nix, python-deps.nix).
#
# Type: { pure; builderSrc; provider; config; buildSets; system; context }
#       -> { variants; buildable; runnable; withToolchain; depsOf; infoOf }
#   variant: a record of pure/variant-records.nix // { buildSet; toolchain; depAttrs;
#            crossTarget (cross-built only) }
{ pure, builderSrc, provider, config, buildSets, system, context }:
let
  # Arch variants of the systems the pinned toolchains cross-build here (requests.targets
  # of nix/toolchain-lock.json: aarch64-linux on x86_64-linux) are this system's outputs
  # too, as derivations of this system; noarch variants are listed once, above.
  crossSystems = provider.crossSystems;
  # Their build sets name the target system: the provider builds for it (pinned.nix).
  crossRecords = builtins.concatMap
    (s: map (r: r // { crossTarget = s; buildSets = map (bs: bs // { system = s; }) r.buildSets; })
      (builtins.filter (r: r.kind != "noarch") (pure.variantRecords.records buildSets config.toml s)))
    crossSystems;
  records = pure.variantRecords.records buildSets config.toml system ++ crossRecords;
  inherit (provider) toolchainFor;

  # The C++ dependencies (build.toml `depends`) and the import check's Python packages
  # (the loader's runtime dependencies and `python-depends`) of each backend's variants.
  cppDeps = import ./cpp-deps.nix { inherit builderSrc provider; } config;
  pythonDeps = import ./python-deps.nix { inherit provider; } config;
  depsOf = builtins.listToAttrs (map
    (backend:
      let cpp = cppDeps backend; py = pythonDeps backend; in
      {
        name = backend;
        value = {
          reason = if cpp.reason != null then cpp.reason else py.reason;
          attrs = cpp.attrs // py.attrs;
          inherit (cpp) hasRust;
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
      else { depAttrs = { }; toolchain = provider.unavailable deps.reason; });
  # `kernel-builder build --cuda-capabilities`: the CUDA arch variants build only those archs.
  narrowCuda = context.buildOptions.cudaCapabilities or [ ];
  narrowAttrs = r:
    if narrowCuda != [ ] && r.backend == "cuda" && r.kind != "noarch"
    then { KERNEL_BUILDER_CUDA_CAPABILITIES = builtins.concatStringsSep "," narrowCuda; }
    else { };
  variants = map withToolchain records;
  buildable = builtins.filter (v: v.toolchain.available) variants;
in
{
  inherit variants buildable withToolchain depsOf;
  # The buildable variants this machine can also load: not the cross-built ones, whose
  # import check and tests need the target machine (see docs/nix.md).
  runnable = builtins.filter (v: !(v ? crossTarget)) buildable;
  # One row of `legacyPackages.<sys>.variantTable` (what the CLI selects from).
  infoOf = v: {
    inherit (v) name kind backend bundle;
    torch = v.buildSet.torch;
    backendVersion = v.buildSet.backendVersion or null;
    buildable = v.toolchain.available;
    reason = v.toolchain.reason;
    buildSet = v.buildSet.key;
    toolchainProvider = if v.toolchain.available then v.toolchain.identity.toolchainProvider else null;
    toolchainPython = if v.toolchain.available then v.toolchain.toolchainPython else null;
  };
}
