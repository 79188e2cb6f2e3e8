let
  m = import ../pure/matrix.nix;
  data = {
    buildSets = [
      { torch = "2.11"; backend = "cpu"; systems = [ "x86_64-linux" ]; bundle = false; }
      { torch = "2.12"; backend = "cpu"; systems = [ "x86_64-linux" "aarch64-darwin" ]; tvmFfi = "0.1"; }
      { torch = "2.12"; backend = "cuda"; backendVersion = "12.6"; systems = [ "x86_64-linux" ]; tvmFfi = "0.1"; }
      { torch = "2.13"; backend = "cuda"; backendVersion = "12.6"; systems = [ "x86_64-linux" ]; }
      { torch = "2.13"; backend = "cuda"; backendVersion = "13.0"; systems = [ "x86_64-linux" ]; }
      { torch = "2.13"; backend = "tpu"; systems = [ "x86_64-linux" ]; }
    ];
  };
  general = backends: { name = "relu"; inherit backends; };
  cudaKernel = { k = { backend = "cuda"; src = [ "k.cu" ]; depends = [ ]; }; };
  names = toml: system: map (v: v.name) (m.matrix data toml system).variants;
in
{
  expandBuildSets = {
    perSystem = {
      expr = map (b: "${b.torch}/${b.backend}/${b.system}") (m.expandBuildSets { buildSets = [ (builtins.elemAt data.buildSets 1) ]; });
      expected = [ "2.12/cpu/x86_64-linux" "2.12/cpu/aarch64-darwin" ];
    };
    defaults = {
      expr = builtins.head (m.expandBuildSets { buildSets = [ { torch = "2.13"; backend = "cpu"; systems = [ "x" ]; } ]; });
      expected = { torch = "2.13"; backend = "cpu"; system = "x"; backendVersion = null; bundle = true; cxx11 = true; tvmFfi = null; };
    };
  };
  systemsOf = {
    sorted = { expr = m.systemsOf (m.expandBuildSets data); expected = [ "aarch64-darwin" "x86_64-linux" ]; };
  };
  kernelConfig = {
    noarchWithoutFramework = { expr = (m.kernelConfig { general = general [ "cpu" ]; }).framework; expected = "torch-noarch"; };
    mlxNoarch = { expr = (m.kernelConfig { general = general [ "metal" ]; mlx-noarch = { }; }).framework; expected = "mlx-noarch"; };
    edition6Languages = {
      expr = (m.kernelConfig { general = general [ "cpu" "cuda" ]; torch = { }; kernel = { a = { language = "cpp-cpu"; }; b = { language = "rust-cutile"; }; }; }).kernelBackends;
      expected = [ "cpu" "cuda" ];
    };
    stableTable = {
      expr = let c = m.kernelConfig { general = general [ "cuda" ]; torch = { stable-abi = { cuda = "2.11"; }; }; }; in [ (c.stableAbiFor "cuda") (c.stableAbiFor "cpu") ];
      expected = [ "2.11" null ];
    };
    stableString = { expr = (m.kernelConfig { general = general [ "cuda" ]; torch = { stable-abi = "2.10"; }; }).stableAbiFor "cpu"; expected = "2.10"; };
  };
  label = {
    cuda = { expr = m.label { torch = "2.13"; backend = "cuda"; backendVersion = "13.0"; system = "x86_64-linux"; }; expected = "torch 2.13 cuda 13.0 x86_64-linux"; };
  };
  kernelConfigWith = {
    defaults = {
      expr = let c = m.kernelConfigWith { torch = { minver = "2.0"; maxver = "99.9"; }; cuda = { minver = "11.8"; }; } { general = general [ "cpu" ]; torch = { maxver = "2.14"; }; }; in [ c.torchMin c.torchMax c.cudaMin c.cudaMax ];
      expected = [ "2.0" "2.14" "11.8" null ];
    };
    unbounded = {
      expr = m.filterReason (m.kernelConfigWith { } { general = general [ "cpu" ]; torch = { }; }) { torch = "0.1"; backend = "cpu"; backendVersion = null; tvmFfi = null; };
      expected = null;
    };
  };
  filterReason = {
    backend = {
      expr = m.filterReason (m.kernelConfig { general = general [ "cpu" ]; torch = { }; }) { torch = "2.13"; backend = "cuda"; backendVersion = "13.0"; tvmFfi = null; };
      expected = "backend cuda not in general.backends (cpu)";
    };
    torchMin = {
      expr = m.filterReason (m.kernelConfig { general = general [ "cpu" ]; torch = { minver = "2.13"; }; }) { torch = "2.12"; backend = "cpu"; backendVersion = null; tvmFfi = null; };
      expected = "torch 2.12 < [torch].minver 2.13";
    };
    cudaMax = {
      expr = m.filterReason (m.kernelConfig { general = general [ "cuda" ] // { cuda = { maxver = "12.8"; }; }; torch = { }; }) { torch = "2.12"; backend = "cuda"; backendVersion = "13.0"; tvmFfi = null; };
      expected = "cuda 13.0 > [general.cuda].maxver 12.8";
    };
    kept = {
      expr = m.filterReason (m.kernelConfig { general = general [ "cpu" ]; torch = { }; }) { torch = "2.12"; backend = "cpu"; backendVersion = null; tvmFfi = null; };
      expected = null;
    };
  };
  variantFor = {
    noarchForBackendWithoutKernel = {
      expr = (m.variantFor (m.kernelConfig { general = general [ "cpu" "cuda" ]; torch = { }; kernel = cudaKernel; }) { torch = "2.13"; backend = "cpu"; system = "x86_64-linux"; backendVersion = null; }).name;
      expected = "torch-cpu";
    };
    edition6ArchForItsLanguage = {
      expr = (m.variantFor (m.kernelConfig { general = general [ "cpu" ]; torch = { }; kernel = { k = { language = "cpp-cpu"; }; }; }) { torch = "2.13"; backend = "cpu"; system = "x86_64-linux"; backendVersion = null; cxx11 = true; }).name;
      expected = "torch213-cxx11-cpu-x86_64-linux";
    };
    mlxNoarch = {
      expr = m.variantFor (m.kernelConfig { general = general [ "metal" ]; mlx-noarch = { }; }) { torch = "2.13"; backend = "metal"; system = "aarch64-darwin"; backendVersion = null; };
      expected = { name = "mlx-metal"; kind = "mlx"; };
    };
  };
  matrix = {
    arch = {
      expr = names { general = general [ "cuda" ]; torch = { }; kernel = cudaKernel; } "x86_64-linux";
      expected = [ "torch212-cxx11-cu126-x86_64-linux" "torch213-cxx11-cu126-x86_64-linux" "torch213-cxx11-cu130-x86_64-linux" ];
    };
    stableAbiKeepsNewestTorch = {
      expr = names { general = general [ "cuda" ]; torch = { stable-abi = { cuda = "2.11"; }; }; kernel = cudaKernel; } "x86_64-linux";
      expected = [ "torch-stable-abi211-cu126-x86_64-linux" "torch-stable-abi211-cu130-x86_64-linux" ];
    };
    stableAbiReason = {
      expr = builtins.head (m.matrix data { general = general [ "cuda" ]; torch = { stable-abi = "2.11"; }; kernel = cudaKernel; } "x86_64-linux").skipped;
      expected = { build_set = "torch 2.11 cpu x86_64-linux"; reason = "backend cpu not in general.backends (cuda)"; };
    };
    noarchCollapses = {
      expr = map (v: { inherit (v) name bundle system torch; }) (m.matrix data { general = general [ "cpu" "cuda" "tpu" ]; torch-noarch = { }; } "all").variants;
      expected = [
        { name = "torch-cpu"; bundle = true; system = null; torch = "2.12"; }
        { name = "torch-cuda"; bundle = true; system = null; torch = "2.12"; }
        { name = "torch-tpu"; bundle = true; system = null; torch = "2.13"; }
      ];
    };
    tvmFfi = {
      expr = names { general = general [ "cpu" "cuda" ]; tvm-ffi = { src = [ "a.cpp" ]; }; } null;
      expected = [ "tvm-ffi01-cpu-aarch64-darwin" "tvm-ffi01-cpu-x86_64-linux" "tvm-ffi01-cu126-x86_64-linux" ];
    };
    nonBundleOnly = {
      expr = map (v: v.bundle) (m.matrix data { general = general [ "cpu" ]; torch = { maxver = "2.11"; }; kernel = { c = { backend = "cpu"; }; }; } "x86_64-linux").variants;
      expected = [ false ];
    };
  };
}
