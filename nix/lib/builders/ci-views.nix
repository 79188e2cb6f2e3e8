# CI outputs with upstream's meaning (docs/nix.md "CI outputs"), for every system the
# build sets name, not only this one: kernels-community's CI evaluates `--system
# aarch64-linux`. A view is the variants of one system (arch variants of that system,
# noarch ones everywhere). Another system's arch variants are this system's cross-built
# derivations where the provider makes them (the same derivations as redistributable),
# else listed with the reason nothing here builds them. Picks and names: pure/ci-outputs.nix.
#
# Type: { pure; config; system; buildSets; variantSet (variant-set.nix); redistributable;
#         split : variant -> derivation; tests (test-outputs.nix); programs (bundle-programs.nix) }
#       -> { here : this system's view; ciTests; ciPackages : { ci-test; kernels } or { };
#            otherPackages; otherLegacyPackages }
{ pure, config, system, buildSets, variantSet, redistributable, split, tests, programs }:
let
  inherit (variantSet) variants runnable withToolchain infoOf;
  inherit (tests) hasTests testsSrc testSiteOf requiredPackage;
  byName = f: vs: builtins.listToAttrs (map (v: { name = v.name; value = f v; }) vs);

  ciOutputs = pure.ciOutputs;
  allSystems = pure.matrix.systemsOf (pure.matrix.expandBuildSets buildSets);
  systemOf = v: v.crossTarget or system;
  viewOf = s:
    let
      here = builtins.filter (v: v.kind == "noarch" || systemOf v == s) variants;
      known = map (v: v.name) here;
      # arch variants of a system this toolchain does not cross-build: the provider says why
      missingRecords = map (r: r // { crossTarget = s; buildSets = map (bs: bs // { system = s; }) r.buildSets; })
        (builtins.filter (r: !(builtins.elem r.name known))
          (pure.variantRecords.records buildSets config.toml s));
    in
    if s == system then builtins.filter (v: !(v ? crossTarget)) variants
    else here ++ map withToolchain missingRecords;
  asRecord = v: { inherit (v) name backend bundle; torch = v.buildSet.torch; backendVersion = v.buildSet.backendVersion or null; };
  bundleOf = members: programs.bundleOf (map (v: { name = v.name; drv = viewRedistributable.${v.name}; }) members);
  # the view's derivations: this system's redistributable, and the unbuildable ones' errors
  viewRedistributable = redistributable // byName split
    (builtins.concatMap (s: builtins.filter (v: !(redistributable ? ${v.name})) (viewOf s)) allSystems);
  ciTestOf = v: import ./ci-test.nix {
    inherit config system;
    variant = v.name;
    tree = redistributable.${v.name};
    inherit (v) toolchain;
    tests = if hasTests then testsSrc else null;
    testSite = testSiteOf v;
  };
  ciTests = byName ciTestOf runnable;
  ciTestVariant = ciOutputs.testPick (map asRecord runnable);
  kernelsCli = v: import ./kernels-cli.nix {
    inherit system;
    inherit (v) toolchain;
    site = if v.toolchain ? testSite then v.toolchain.testSite [ (requiredPackage "kernels") ] else null;
  };
  ciViewOf = s:
    let
      view = viewOf s;
      viewBuildable = builtins.filter (v: v.toolchain.available) view;
      viewBundle = builtins.filter (v: v.bundle) viewBuildable;
      byBackend = vs: builtins.foldl' (acc: v: acc // { ${v.backend} = (acc.${v.backend} or [ ]) ++ [ v ]; }) { } vs;
      representative = ciOutputs.representatives (map asRecord viewBuildable);
      toolchainPackages = v:
        let t = v.toolchain; in
        builtins.removeAttrs (t.parts or { }) (builtins.filter (n: (t.parts or { }).${n} == null) (builtins.attrNames (t.parts or { })))
        // (let site = testSiteOf v; in if site == null then { } else { testSite = site; });
    in
    {
      variants = map (v: v.name) view;
      variantTable = map infoOf view;
      bundleVariants = map (v: v.name) (builtins.filter (v: v.bundle) view);
      buildableVariants = map (v: v.name) viewBuildable;
      redistributable = byName (v: viewRedistributable.${v.name}) view;
      bundle = bundleOf viewBundle;
      # every buildable bundle variant of one backend (releases)
      backendBundle = builtins.mapAttrs (_: bundleOf) (byBackend viewBundle);
      # one variant per backend: the newest torch (pull requests)
      backendCi = builtins.mapAttrs (_: r: bundleOf [ (builtins.head (builtins.filter (v: v.name == r.name) viewBuildable)) ]) representative;
      archVariants = ciOutputs.archVariants buildSets config.toml s;
      # each buildable variant's toolchain (upstream: the variant's nixpkgs package set)
      pkgs = byName toolchainPackages viewBuildable;
    };
  ciViews = builtins.listToAttrs (map (s: { name = s; value = ciViewOf s; }) (allSystems ++ (if builtins.elem system allSystems then [ ] else [ system ])));
  otherSystems = builtins.filter (s: s != system) (builtins.attrNames ciViews);
  # another system's outputs: its view's bundle, backend bundles and names (built here)
  otherOutputs = f: builtins.listToAttrs (map (s: { name = s; value = f ciViews.${s}; }) otherSystems);
in
{
  here = ciViews.${system};
  inherit ciTests;
  # `ci-test` and `kernels` (upstream's): the kernel tests marked kernels_ci and the
  # loader's CLI, with the runnable variant pure/ci-outputs.nix picks (none: neither)
  ciPackages = if ciTestVariant == null then { } else {
    ci-test = ciTests.${ciTestVariant.name};
    kernels = kernelsCli (builtins.head (builtins.filter (v: v.name == ciTestVariant.name) runnable));
  };
  otherPackages = otherOutputs (view: {
    default = view.bundle;
    inherit (view) bundle;
  } // programs.copyPrograms view.bundle);
  otherLegacyPackages = otherOutputs (view: {
    inherit (view) variants variantTable bundleVariants buildableVariants redistributable bundle
      backendBundle backendCi archVariants pkgs;
    # the tests of a cross-built variant need its machine (see ci-test.nix)
    ciTests = { };
  });
}
