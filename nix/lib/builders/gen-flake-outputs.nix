# The outputs of a kernel flake, for one system (the machine's; raw derivations only run
# where they are built).
#
# Arguments (pure/flake-args.nix; docs/nix.md has them beside upstream's): upstream's
# self, path, rev, torchVersions, pythonCheckInputs, pythonNativeCheckInputs,
# doGetKernelCheck, and ours, system and toolchainProvider. Any other is an error.
#
# Type: { builderSrc; context; pure; nativeOnly ? false } -> attrset of arguments
#       -> { packages; legacyPackages; devShells; checks; }
{ builderSrc, context, pure, nativeOnly ? false }:
given:
let
  args = pure.flakeArgs.check given;
  self = args.self or null;
  rev = args.rev or null;
  path =
    if rev != null && self == null then
      throw "kernel-builder: the `rev` argument of genKernelFlakeOutputs is deprecated; pass the flake's self instead: kernel-builder.lib.genKernelFlakeOutputs { inherit self; path = ./.; }"
    else args.path or (throw "kernel-builder: genKernelFlakeOutputs needs `path`: call it as kernel-builder.lib.genKernelFlakeOutputs { inherit self; path = ./.; }");
  system = args.system or (if context.toolchain != null then context.toolchain.system else "x86_64-linux");
  toolchainProvider = args.toolchainProvider or null;
  # upstream: the import check of every variant build; false skips it (see docs/nix.md)
  doGetKernelCheck = args.doGetKernelCheck or true;
  pythonCheckInputs = args.pythonCheckInputs or (_: [ ]);
  pythonNativeCheckInputs = args.pythonNativeCheckInputs or (_: [ ]);

  config = pure.kernelConfig path;
  buildSets = pure.torchVersions.apply (args.torchVersions or null)
    (builtins.fromJSON (builtins.readFile (builderSrc.outPath + "/nix/build-sets.json")));
  # Pinned (hermetic) toolchains unless `kernel-builder build --toolchain host` recorded
  # this machine's toolchain in the builder input (nix/toolchains/default.nix).
  provider = (import ../../toolchains).select {
    name = if context.toolchain == null then "pinned" else context.toolchain.provider or "host";
    recorded = context.toolchain;
    inherit system;
    custom = toolchainProvider;
  };
  kernel = pure.kernelIdentity { inherit self path; recorded = context.kernel; };
  byName = f: vs: builtins.listToAttrs (map (v: { name = v.name; value = f v; }) vs);

  # The variants and their toolchains (variant-set.nix), each variant's derivation by kind
  # (variant-kinds.nix), the bundle and its programs (bundle-programs.nix), the checks,
  # tests and test shells (test-outputs.nix) and the CI outputs (ci-views.nix).
  variantSet = import ./variant-set.nix { inherit pure builderSrc provider config buildSets system context; };
  inherit (variantSet) variants buildable runnable;
  kinds = import ./variant-kinds.nix {
    inherit pure path config system kernel context nativeOnly doGetKernelCheck;
    inherit (variantSet) depsOf;
  };
  redistributable = byName kinds.split variants;
  tests = import ./test-outputs.nix {
    inherit config system path context provider redistributable runnable
      doGetKernelCheck pythonCheckInputs pythonNativeCheckInputs;
    inherit (kinds) kernelDeps;
  };
  inherit (tests) checks kernelTests testShells;
  programs = import ./bundle-programs.nix { inherit builderSrc provider config system path context kernel buildable; };
  bundleVariants = builtins.filter (v: v.bundle) buildable;
  bundle = programs.bundleOf (map (v: { name = v.name; drv = redistributable.${v.name}; }) bundleVariants);
  copyPrograms = programs.copyPrograms bundle;
  ci = programs.ciOf (builtins.concatMap
    (v: [ { name = v.name; drv = redistributable.${v.name}; } ]
      ++ (if checks ? ${v.name} then [ { name = "${v.name}-check"; drv = checks.${v.name}; } ] else [ ])
      ++ (if kernelTests ? ${v.name} then [ { name = "${v.name}-tests"; drv = kernelTests.${v.name}.check; } ] else [ ]))
    buildable);
  ciViews = import ./ci-views.nix { inherit pure config system buildSets variantSet redistributable tests programs; inherit (kinds) split; };
  devShells = byName kinds.devShell buildable;

  # The other systems the pinned toolchains build for natively (the lock's system and its
  # requests.hosts: aarch64-linux on a Grace machine) have their own outputs: this flake
  # evaluated for that system, whose derivations are that system's, made of its artifacts
  # (`nix run .#build-variants` there needs no builder of this one). Their cross-built
  # variants stay this system's outputs (bundle, redistributable, --system here).
  nativeSystems = if nativeOnly then [ ] else provider.nativeSystems;
  natives = builtins.listToAttrs (map
    (s: { name = s; value = import ./gen-flake-outputs.nix { inherit builderSrc context pure; nativeOnly = true; } (given // { system = s; }); })
    nativeSystems);
  nativeOutputs = name: builtins.mapAttrs (s: outputs: outputs.${name}.${s}) natives;
in
{
  packages = ciViews.otherPackages // nativeOutputs "packages" // { ${system} = {
    default = bundle;
    inherit bundle ci;
    build-and-upload = programs.uploadProgram { copy = copyPrograms.build-and-copy; count = builtins.length bundleVariants; };
  } // copyPrograms // ciViews.ciPackages; };
  # Non-derivation values live here so that `nix flake check` passes; the CLI paths stay
  # `.#variants`, `.#redistributable.<variant>`.
  legacyPackages = ciViews.otherLegacyPackages // nativeOutputs "legacyPackages" // { ${system} = {
    variants = map (v: v.name) variants;
    bundleVariants = map (v: v.name) (builtins.filter (v: v.bundle) variants);
    buildableVariants = map (v: v.name) buildable;
    # One record per variant, in matrix order: what the CLI selects from.
    variantTable = map variantSet.infoOf variants;
    inherit redistributable bundle;
    # Every variant as one derivation (per-object.nix's comparison: its tests and benchmarks).
    monolithic = byName kinds.monolithic variants;
    # The filtered source each backend's variants see (for inspection and tests).
    inherit (kinds) sources;
    kernelIdentity = kernel;
    inherit (copyPrograms) build-variants;
    # The recorded kernel-test run of each buildable variant (`kernel-builder test`
    # builds these; checks.<variant>-tests fails on a failed run). Empty without tests/.
    testRuns = builtins.mapAttrs (_: t: t.run) kernelTests;
    # One test shell per buildable variant (devShells.<sys>.test is the first).
    inherit testShells;
    # pythonCheckInputs' package set, by name (each: its pinned wheels).
    checkPackages = builtins.mapAttrs (_: p: p.keys) provider.checkPackages;
    # upstream's CI outputs (ci-views.nix): this system's variants only
    inherit (ciViews.here) backendBundle backendCi archVariants pkgs;
    inherit (ciViews) ciTests;
  }; };
  devShells = nativeOutputs "devShells" // {
    ${system} = devShells // (if runnable == [ ] then { } else {
      default = devShells.${(builtins.head runnable).name};
      test = testShells.${(builtins.head runnable).name};
    });
  };
  checks = nativeOutputs "checks" // { ${system} = checks // builtins.listToAttrs (map
    (name: { name = "${name}-tests"; value = kernelTests.${name}.check; })
    (builtins.attrNames kernelTests)); };
}
