# The library's own exports (../default.nix), as a kernel flake calls them. The toolchain
# provider is a stand-in, so nothing here builds or needs a toolchain.
let
  # a flake's outPath is a string (its store path)
  lib = import ../. { builderSrc = { outPath = toString ../../..; }; };
  recordedLib = import ../. { builderSrc = { outPath = toString ./fixtures/recorded; }; };
  system = "x86_64-linux";
  fake = { recorded, system }: buildSet: {
    available = buildSet.backend == "cpu";
    reason = if buildSet.backend == "cpu" then "" else "no toolchain for ${buildSet.key}";
    builder = "/bin/bash";
    driverPython = "/fake/bin/python";
    toolchainPython = "/fake/${buildSet.key}/bin/python";
    env = { PATH = "/fake/bin"; };
    identity = { toolchainProvider = "fake"; };
  };
  relu = ../../../examples/relu;
  outputsWith = extra: lib.genKernelFlakeOutputs ({ path = relu; toolchainProvider = fake; } // extra);
  outputs = outputsWith { };
  legacy = outputs.legacyPackages.${system};
  buildSets = builtins.fromJSON (builtins.readFile ../../build-sets.json);
  matrixNames = map (v: v.name) ((import ../pure/matrix.nix).matrix buildSets (builtins.fromTOML (builtins.readFile (relu + "/build.toml"))) system).variants;
  cpuNames = builtins.filter (n: builtins.match ".*-cpu-.*" n != null) matrixNames;
  newestCpu = (builtins.head (builtins.sort (a: b: (import ../pure/versions.nix).compare a.torch b.torch > 0)
    (builtins.filter (r: r.backend == "cpu" && r.bundle) legacy.variantTable))).name;
in
{
  genKernelFlakeOutputs = {
    variantsAreTheMatrix = { expr = legacy.variants; expected = matrixNames; };
    buildableFollowsTheProvider = { expr = legacy.buildableVariants; expected = cpuNames; };
    outputShape = {
      expr = {
        packages = builtins.attrNames outputs.packages.${system};
        checks = builtins.attrNames outputs.checks.${system};
        devShells = builtins.attrNames outputs.devShells.${system};
      };
      expected = {
        packages = [ "build-and-copy" "build-and-upload" "build-variants" "bundle" "ci" "ci-test" "default" "kernels" ];
        checks = builtins.sort builtins.lessThan (cpuNames ++ map (n: "${n}-tests") cpuNames);
        devShells = [ "default" "test" ] ++ cpuNames;
      };
    };
    tableRow = {
      expr = let row = builtins.head legacy.variantTable; in { inherit (row) name buildable toolchainPython toolchainProvider; };
      expected = let row = builtins.head legacy.variantTable; in {
        name = builtins.head matrixNames; buildable = true; toolchainPython = "/fake/${row.buildSet}/bin/python"; toolchainProvider = "fake";
      };
    };
    unbuildableHasAReason = {
      expr = map (r: r.reason) (builtins.filter (r: !r.buildable) legacy.variantTable);
      expected = map (r: "no toolchain for ${r.buildSet}") (builtins.filter (r: r.backend == "cuda") legacy.variantTable);
    };
    sourcesPerBackend = { expr = builtins.attrNames legacy.sources; expected = [ "cpu" "cuda" ]; };
    # upstream's arguments, with upstream's meaning
    unknownArgumentIsRefused = {
      expr = builtins.tryEval (outputsWith { torchVersion = _: [ ]; }).legacyPackages.${system}.variants;
      expected = { success = false; value = false; };
    };
    emptyTorchVersionsGivesNoVariants = { expr = (outputsWith { torchVersions = _: [ ]; }).legacyPackages.${system}.variants; expected = [ ]; };
    torchVersionsFilters = {
      expr = (outputsWith { torchVersions = builtins.filter (v: v ? cpu && v.torchVersion == "2.13"); }).legacyPackages.${system}.variants;
      expected = [ "torch213-cxx11-cpu-x86_64-linux" ];
    };
    revWithoutSelfIsRefused = {
      expr = (builtins.tryEval (outputsWith { rev = "abc"; }).legacyPackages.${system}.variants).success;
      expected = false;
    };
    doGetKernelCheckFalseSkipsTheImportCheck = {
      expr = map (o: o.legacyPackages.${system}.redistributable.${builtins.head cpuNames}.noImportCheck or null)
        [ outputs (outputsWith { doGetKernelCheck = false; }) ];
      expected = [ null "1" ];
    };
    testShellIsTheFirstBuildableVariants = { expr = (outputs.devShells.${system}.test).variant; expected = builtins.head cpuNames; };
    buildAndUploadNamesTheRepo = { expr = outputs.packages.${system}.build-and-upload.repoId; expected = "kernels-test/relu"; };
    ciHasEveryBuildableVariantItsCheckAndTests = {
      expr = outputs.packages.${system}.ci.memberNames;
      expected = builtins.concatMap (n: [ n "${n}-check" "${n}-tests" ]) cpuNames;
    };
    testRunsForBuildableVariants = { expr = builtins.attrNames legacy.testRuns; expected = cpuNames; };
    checkInputsAreNamed = {
      expr = (outputsWith { pythonCheckInputs = pkgs: with pkgs; [ einops ]; }).legacyPackages.${system}.testRuns.${builtins.head cpuNames}.checkInputs;
      expected = [ "pytest" "numpy" "kernels" "einops" ];
    };
    aCheckInputMustBeAPinnedPackage = {
      expr = (builtins.tryEval (let l = (outputsWith { pythonCheckInputs = _: [ "einops" ]; }).legacyPackages.${system}.testRuns.${builtins.head cpuNames}.checkInputs; in builtins.deepSeq l l)).success;
      expected = false;
    };
    checkPackagesAreTheLocksTestGroups = {
      expr = builtins.all (n: legacy.checkPackages ? ${n}) [ "pytest" "numpy" "kernels" "einops" ];
      expected = true;
    };
    # upstream's CI outputs (docs/nix.md "CI outputs")
    backendCiIsTheNewestTorchOfEachBuildableBackend = {
      expr = builtins.mapAttrs (_: b: b.variantNames) legacy.backendCi;
      expected = { cpu = [ newestCpu ]; };
    };
    backendBundleIsEveryBundleVariantOfTheBackend = {
      expr = builtins.mapAttrs (_: b: b.variantNames) legacy.backendBundle;
      expected = { cpu = builtins.filter (n: builtins.elem n legacy.bundleVariants) cpuNames; };
    };
    ciTestRunsTheNewestBuildableVariant = {
      expr = { inherit (outputs.packages.${system}.ci-test) name; tests = builtins.attrNames legacy.ciTests; };
      expected = { name = "relu-${newestCpu}-ci-test"; tests = cpuNames; };
    };
    ciTestScriptNamesTheVariantAndKernelsCi = {
      expr = builtins.map (s: builtins.match ".*${s}.*" outputs.packages.${system}.ci-test.script != null)
        [ "-m kernels_ci" "LOCAL_KERNELS='kernels-test/relu=" "KERNEL_BUILDER_TEST_VARIANT='${newestCpu}'" ];
      expected = [ true true true ];
    };
    archVariantsAreThePureOnes = {
      expr = legacy.archVariants;
      expected = (import ../pure/ci-outputs.nix).archVariants buildSets (builtins.fromTOML (builtins.readFile (relu + "/build.toml"))) system;
    };
    pkgsForBuildableVariants = { expr = builtins.attrNames legacy.pkgs; expected = cpuNames; };
    # every system of the build sets has outputs; another system's arch variants are its own
    everySystemOfTheBuildSets = {
      expr = builtins.attrNames outputs.legacyPackages;
      expected = (import ../pure/matrix.nix).systemsOf ((import ../pure/matrix.nix).expandBuildSets buildSets);
    };
    aarch64LinuxVariantsAreItsOwn = {
      expr = let l = outputs.legacyPackages.aarch64-linux; in {
        variants = builtins.all (n: builtins.match ".*-aarch64-linux" n != null) l.variants;
        backends = builtins.attrNames l.backendCi;
        ciTests = l.ciTests;
        packages = builtins.attrNames outputs.packages.aarch64-linux;
      };
      expected = { variants = true; backends = [ "cpu" ]; ciTests = { }; packages = [ "build-and-copy" "build-variants" "bundle" "default" ]; };
    };
    needsPath = { expr = (builtins.tryEval (lib.genKernelFlakeOutputs { toolchainProvider = fake; }).legacyPackages.${system}.variants).success; expected = false; };
  };
  allBuildVariantsJSON = {
    isThePureOne = {
      expr = builtins.fromJSON lib.allBuildVariantsJSON;
      expected = (import ../pure/ci-outputs.nix).allBuildVariants buildSets;
    };
  };
  kernelConfig = {
    relu = { expr = (lib.kernelConfig relu).name; expected = "relu"; };
  };
  context = {
    checkoutHasNoRecord = { expr = { inherit (lib.context) toolchain kernel; }; expected = { toolchain = null; kernel = null; }; };
    recorded = {
      expr = { inherit (recordedLib.context) toolchain kernel; };
      expected = {
        toolchain = { system = "x86_64-linux"; provider = "host"; };
        kernel = { unique-id = "abc1234"; commit = "abc1234def"; dirty = false; };
      };
    };
    pythonSrcIsTheVariantBuild = {
      expr = map (rel: builtins.pathExists "${lib.context.pythonSrc}/kernel_builder/${rel}") [ "driver/run_variant.py" "tree/checks.py" "variants/compat.py" "cli/build.py" "flake/selection.py" "toolchain/host/setup.py" ];
      expected = [ true true true false false false ];
    };
    pythonFullSrcIsTheWholePackage = {
      expr = map (rel: builtins.pathExists "${lib.context.pythonFullSrc}/kernel_builder/${rel}") [ "driver/run_variant.py" "cli/build.py" ];
      expected = [ true true ];
    };
  };
}
