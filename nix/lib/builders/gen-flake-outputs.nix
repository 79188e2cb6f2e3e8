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
  # Pinned (hermetic) toolchains unless `kernel-builder build --toolchain host` recorded
  # this machine's toolchain in the builder input (nix/toolchains/default.nix).
  provider = (import ../../toolchains).select {
    name = if context.toolchain == null then "pinned" else context.toolchain.provider or "host";
    recorded = context.toolchain;
    inherit system;
    custom = toolchainProvider;
  };
  inherit (provider) toolchainFor;
  kernel = pure.kernelIdentity { inherit self path; recorded = context.kernel; };

  sources = builtins.listToAttrs (map
    (backend: { name = backend; value = import ./source.nix { inherit pure path config backend; }; })
    config.backends);

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
  # `kernel-builder build --layout`: the variants' build layout, over build.toml's (an
  # attribute only when given, so the default derivations stay as they are).
  layoutAttrs = if (context.buildOptions.buildLayout or null) == null then { }
    else { KERNEL_BUILDER_BUILD_LAYOUT = context.buildOptions.buildLayout; };
  variants = map withToolchain records;
  buildable = builtins.filter (v: v.toolchain.available) variants;
  # The buildable variants this machine can also load: not the cross-built ones, whose
  # import check and tests need the target machine (see docs/nix.md).
  runnable = builtins.filter (v: !(v ? crossTarget)) buildable;

  # doGetKernelCheck = false: the one-variant build skips its import check (an attribute
  # only then, so the default derivations stay as they are).
  importCheckAttrs = if doGetKernelCheck then { } else { noImportCheck = "1"; };
  # Arch variants with the pinned toolchain build per translation unit (per-object.nix:
  # plan -> objects -> link -> variant); noarch ones, the host toolchain and the dev shells
  # (`nix develop` runs the one-variant build by hand) stay one derivation.
  isPinned = toolchain: (toolchain.identity.toolchainProvider or "host") == "pinned";
  # A variant with Rust components stays one derivation too: cargo builds its crates first.
  # So does every variant of another native system's outputs (nativeOnly: aarch64-linux's
  # on x86_64): per-object evaluation builds the plan and deps steps (import from
  # derivation), which only that machine can run, and every machine evaluates them
  # (`nix flake check`, kernels-community's matrix).
  perObject = v: !nativeOnly && v.kind != "noarch" && v.toolchain.available && isPinned v.toolchain && !depsOf.${v.backend}.hasRust;
  # The pinned toolchain's steps import the driver's package bytecode-compiled; the host
  # toolchain's Python may be another version, so it gets the sources.
  compiledPython = import ./compiled-python.nix { inherit system; inherit (context) pythonSrc; };
  # The locked kernel-depends trees the import check resolves get_kernel_dep from.
  kernelDeps = import ./kernel-deps.nix { inherit system; deps = context.kernelDeps or [ ]; };
  mkVariantWith = split: extraAttrs: v: import (if split && perObject v then ./per-object.nix else ./variant.nix) ({
    inherit config system kernel;
    extraAttrs = importCheckAttrs // layoutAttrs // v.depAttrs // kernelDeps.attrs v // extraAttrs;
    inherit (v) backend toolchain;
    variant = v.name;
    src = sources.${v.backend};
    pythonSrc = if isPinned v.toolchain then compiledPython v.toolchain else context.pythonSrc;
  } // (if split && perObject v then { inherit pure path; } else { }));
  mkVariant = mkVariantWith true;
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
  # upstream's names: build-and-copy (= build-variants) and build-and-upload
  buildAndCopy = import ./build-variants.nix { inherit config system bundle shell; program = "build-and-copy"; };
  buildAndUpload = import ./build-and-upload.nix {
    inherit config system shell;
    copy = buildAndCopy;
    cli = import ../../cli-package.nix { inherit builderSrc system provider; };
    count = builtins.length bundleVariants;
  };
  ci = import ./ci.nix {
    inherit config system shell;
    members = builtins.concatMap
      (v: [ { name = v.name; drv = redistributable.${v.name}; } ]
        ++ (if checks ? ${v.name} then [ { name = "${v.name}-check"; drv = checks.${v.name}; } ] else [ ])
        ++ (if kernelTests ? ${v.name} then [ { name = "${v.name}-tests"; drv = kernelTests.${v.name}.check; } ] else [ ]))
      buildable;
  };
  testSiteOf = v: if v.toolchain ? testSite then v.toolchain.testSite testPackages else null;
  # The variant a kernel test sees (test-env.nix's arguments), for the runs and the shells.
  testEnvArgs = v: {
    # the locked kernel-depends (LOCAL_KERNELS entries), read by test-env.nix
    config = config // { kernelDepsLocal = kernelDeps.localKernels; };
    inherit system;
    variant = v.name;
    tree = redistributable.${v.name};
    inherit (v) toolchain;
    testSite = testSiteOf v;
  };
  testShells = byName (v: import ./test-shell.nix (testEnvArgs v)) runnable;
  devShells = byName
    (mkVariantWith false {
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
      importCheck = doGetKernelCheck;
    })
    runnable;

  # The kernel's tests/ against each buildable variant (kernel-tests.nix). `pkgs` of
  # pythonCheckInputs is the pinned kernel-test package set of nix/toolchain-lock.json.
  inherit (provider) checkPackages;
  testsDir = path + "/tests";
  hasTests = builtins.pathExists testsDir;
  testsSrc = builtins.path {
    path = testsDir;
    name = "${config.name}-tests";
    filter = p: type: baseNameOf p != "__pycache__";
  };
  asPackage = argName: i: p:
    if builtins.isAttrs p && (p.kernelBuilderCheckPackage or false) then p
    else throw "kernel-builder: ${argName}: element ${toString i} of its list is not a package of the pinned kernel-test set (got a ${builtins.typeOf p}); write it as `pkgs: with pkgs; [ einops ]`; the set holds: ${builtins.concatStringsSep ", " (builtins.attrNames checkPackages)}";
  checkList = argName: f:
    let l = f checkPackages; in
    if !(builtins.isList l) then throw "kernel-builder: ${argName} must return a list, e.g. ${argName} = pkgs: with pkgs; [ einops ];"
    else builtins.genList (i: asPackage argName i (builtins.elemAt l i)) (builtins.length l);
  requiredPackage = name: checkPackages.${name}
    or (throw "kernel-builder: the kernel-test package ${name} is not pinned in nix/toolchain-lock.json; add \"${name}\" to requests.python.test and run `kernel-builder toolchain lock`");
  testPackages = map requiredPackage [ "pytest" "numpy" "kernels" ]
    ++ checkList "pythonCheckInputs" pythonCheckInputs
    ++ checkList "pythonNativeCheckInputs" pythonNativeCheckInputs;
  kernelTests = byName
    (v: import ./kernel-tests.nix (testEnvArgs v // {
      tests = testsSrc;
      packages = testPackages;
      select = context.testSelect or null;
      testArgs = context.testArgs or { };
    }))
    (if hasTests then runnable else [ ]);
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
  info = map infoOf variants;

  # ---- CI outputs with upstream's meaning (docs/nix.md "CI outputs") ----
  # Outputs for every system the build sets name, not only this one: kernels-community's
  # CI evaluates `--system aarch64-linux`. A view is the variants of one system (arch
  # variants of that system, noarch ones everywhere). Another system's arch variants are
  # this system's cross-built derivations where the pinned toolchains make them (the same
  # derivations as above), else listed with the reason nothing here builds them.
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
  bundleOf = members: import ./bundle.nix {
    inherit config system path context kernel shell;
    variants = map (v: { name = v.name; drv = viewRedistributable.${v.name}; }) members;
  };
  # the view's derivations: this system's redistributable, and the unbuildable ones' errors
  viewRedistributable = redistributable // byName (mkVariant { })
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
  ciHere = ciViews.${system};
  otherSystems = builtins.filter (s: s != system) (builtins.attrNames ciViews);
  # another system's outputs: its view's bundle, backend bundles and names (built here)
  otherOutputs = f: builtins.listToAttrs (map (s: { name = s; value = f ciViews.${s}; }) otherSystems);
  otherPackages = otherOutputs (view: {
    default = view.bundle;
    inherit (view) bundle;
    build-variants = import ./build-variants.nix { inherit config system shell; inherit (view) bundle; };
    build-and-copy = import ./build-variants.nix { inherit config system shell; inherit (view) bundle; program = "build-and-copy"; };
  });
  otherLegacyPackages = otherOutputs (view: {
    inherit (view) variants variantTable bundleVariants buildableVariants redistributable bundle
      backendBundle backendCi archVariants pkgs;
    # the tests of a cross-built variant need its machine (see ci-test.nix)
    ciTests = { };
  });
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
  packages = otherPackages // nativeOutputs "packages" // { ${system} = {
    default = bundle;
    inherit bundle;
    build-variants = buildVariants;
    build-and-copy = buildAndCopy;
    build-and-upload = buildAndUpload;
    inherit ci;
  } // (if ciTestVariant == null then { } else {
    ci-test = ciTests.${ciTestVariant.name};
    kernels = kernelsCli (builtins.head (builtins.filter (v: v.name == ciTestVariant.name) runnable));
  }); };
  # Non-derivation values live here so that `nix flake check` passes; the CLI paths stay
  # `.#variants`, `.#redistributable.<variant>`.
  legacyPackages = otherLegacyPackages // nativeOutputs "legacyPackages" // { ${system} = {
    variants = map (v: v.name) variants;
    bundleVariants = map (v: v.name) (builtins.filter (v: v.bundle) variants);
    buildableVariants = map (v: v.name) buildable;
    # One record per variant, in matrix order: what the CLI selects from.
    variantTable = info;
    inherit redistributable bundle;
    # Every variant as one derivation (per-object.nix's comparison: its tests and benchmarks).
    monolithic = byName (mkVariantWith false { }) variants;
    # The filtered source each backend's variants see (for inspection and tests).
    inherit sources;
    kernelIdentity = kernel;
    build-variants = buildVariants;
    # The recorded kernel-test run of each buildable variant (`kernel-builder test`
    # builds these; checks.<variant>-tests fails on a failed run). Empty without tests/.
    testRuns = builtins.mapAttrs (_: t: t.run) kernelTests;
    # One test shell per buildable variant (devShells.<sys>.test is the first).
    inherit testShells;
    # pythonCheckInputs' package set, by name (each: its pinned wheels).
    checkPackages = builtins.mapAttrs (_: p: p.keys) checkPackages;
    # upstream's CI outputs (see ciViewOf): this system's variants only
    inherit (ciHere) backendBundle backendCi archVariants pkgs;
    inherit ciTests;
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
