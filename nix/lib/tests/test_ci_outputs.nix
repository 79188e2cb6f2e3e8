let
  c = import ../pure/ci-outputs.nix;
  # a build-set list of our own, so that these tests do not follow build-sets.json
  data = {
    schema = 1;
    defaultBounds = { torch = { minver = "2.0"; maxver = "99.9"; }; cuda = { minver = "11.8"; maxver = "99.9"; }; };
    buildSets = [
      { torch = "2.11"; backend = "cpu"; systems = [ "x86_64-linux" ]; bundle = false; cxx11 = true; }
      { torch = "2.11"; backend = "tpu"; systems = [ "x86_64-linux" ]; bundle = true; cxx11 = true; }
      { torch = "2.12"; backend = "cpu"; systems = [ "aarch64-darwin" "x86_64-linux" ]; bundle = true; cxx11 = true; }
      { torch = "2.12"; backend = "cuda"; backendVersion = "12.6"; systems = [ "x86_64-linux" ]; bundle = true; cxx11 = true; }
      { torch = "2.13"; backend = "cpu"; systems = [ "aarch64-linux" "x86_64-linux" ]; bundle = true; cxx11 = true; }
      { torch = "2.13"; backend = "cuda"; backendVersion = "13.0"; systems = [ "x86_64-linux" ]; bundle = true; cxx11 = true; }
      { torch = "2.13"; backend = "cuda"; backendVersion = "12.6"; systems = [ "x86_64-linux" ]; bundle = true; cxx11 = true; }
    ];
  };
  arch = builtins.fromTOML ''
    [general]
    name = "k"
    backends = ["cpu", "cuda"]
    [torch]
    src = ["torch-ext/b.cpp"]
    [kernel.k_cpu]
    backend = "cpu"
    src = ["k_cpu/k.cpp"]
    [kernel.k_cuda]
    backend = "cuda"
    src = ["k_cuda/k.cu"]
  '';
  noarch = builtins.fromTOML ''
    [general]
    name = "k"
    backends = ["cpu", "cuda"]
    [torch-noarch]
  '';
  bounded = builtins.fromTOML ''
    [general]
    name = "k"
    backends = ["cpu"]
    [torch]
    src = ["torch-ext/b.cpp"]
    minver = "2.13"
    [kernel.k_cpu]
    backend = "cpu"
    src = ["k_cpu/k.cpp"]
  '';
  r = backend: torch: backendVersion: bundle: { inherit backend torch backendVersion bundle; name = "${backend}-${torch}-${toString backendVersion}"; };
in
{
  ciBefore = {
    newerTorchFirst = { expr = c.ciBefore (r "cpu" "2.14" null true) (r "cpu" "2.13" null true); expected = true; };
    bundleBeatsNewerTorch = { expr = c.ciBefore (r "cpu" "2.13" null true) (r "cpu" "2.14" null false); expected = true; };
    olderBackendVersionFirst = { expr = c.ciBefore (r "cuda" "2.13" "12.6" true) (r "cuda" "2.13" "13.0" true); expected = true; };
    numericNotTextual = { expr = c.ciBefore (r "cpu" "2.10" null true) (r "cpu" "2.9" null true); expected = true; };
  };
  testBefore = {
    cudaBeforeCpu = { expr = c.testBefore (r "cuda" "2.12" "13.0" true) (r "cpu" "2.14" null true); expected = true; };
    bundleBeforeCuda = { expr = c.testBefore (r "cpu" "2.12" null true) (r "cuda" "2.14" "13.0" false); expected = true; };
    rocmBeforeMetal = { expr = c.testBefore (r "rocm" "2.12" "7.1" true) (r "metal" "2.14" null true); expected = true; };
  };
  representatives = {
    newestTorchPerBackend = {
      expr = builtins.mapAttrs (_: v: v.name) (c.representatives [
        (r "cpu" "2.12" null true) (r "cuda" "2.13" "13.0" true) (r "cpu" "2.14" null true)
        (r "cuda" "2.13" "12.6" true) (r "cuda" "2.12" "13.0" true) (r "cpu" "2.15" null false)
      ]);
      expected = { cpu = "cpu-2.14-"; cuda = "cuda-2.13-12.6"; };
    };
    none = { expr = c.representatives [ ]; expected = { }; };
  };
  testPick = {
    cudaNewest = {
      expr = (c.testPick [ (r "cpu" "2.14" null true) (r "cuda" "2.12" "13.0" true) (r "cuda" "2.13" "13.0" true) ]).name;
      expected = "cuda-2.13-13.0";
    };
    none = { expr = c.testPick [ ]; expected = null; };
  };
  archVariants = {
    archKernel = {
      expr = c.archVariants data arch "x86_64-linux";
      expected = [ "torch211-cxx11-cpu-x86_64-linux" "torch212-cxx11-cpu-x86_64-linux" "torch212-cxx11-cu126-x86_64-linux"
        "torch213-cxx11-cpu-x86_64-linux" "torch213-cxx11-cu130-x86_64-linux" "torch213-cxx11-cu126-x86_64-linux" ];
    };
    # torch-cpu and torch-cuda stand for one arch name per build set
    noarchKernel = {
      expr = c.archVariants data noarch "x86_64-linux";
      expected = [ "torch211-cxx11-cpu-x86_64-linux" "torch212-cxx11-cpu-x86_64-linux" "torch212-cxx11-cu126-x86_64-linux"
        "torch213-cxx11-cpu-x86_64-linux" "torch213-cxx11-cu130-x86_64-linux" "torch213-cxx11-cu126-x86_64-linux" ];
    };
    torchBounds = { expr = c.archVariants data bounded "x86_64-linux"; expected = [ "torch213-cxx11-cpu-x86_64-linux" ]; };
    otherSystem = { expr = c.archVariants data arch "aarch64-linux"; expected = [ "torch213-cxx11-cpu-aarch64-linux" ]; };
    darwinHasNoCxx11 = { expr = c.archVariants data noarch "aarch64-darwin"; expected = [ "torch212-cpu-aarch64-darwin" ]; };
  };
  allBuildVariants = {
    bySystemAndBackend = {
      expr = c.allBuildVariants data;
      expected = {
        aarch64-darwin = { cpu = [ "torch212-cpu-aarch64-darwin" ]; };
        aarch64-linux = { cpu = [ "torch213-cxx11-cpu-aarch64-linux" ]; };
        x86_64-linux = {
          tpu = [ "torch-tpu" ];
          cpu = [ "torch212-cxx11-cpu-x86_64-linux" "torch213-cxx11-cpu-x86_64-linux" ];
          cuda = [ "torch212-cxx11-cu126-x86_64-linux" "torch213-cxx11-cu130-x86_64-linux" "torch213-cxx11-cu126-x86_64-linux" ];
        };
      };
    };
  };
}
