let
  t = import ../pure/torch-versions.nix;
  m = import ../pure/matrix.nix;
  data = builtins.fromJSON (builtins.readFile ../../build-sets.json);
  toml = builtins.fromTOML ''
    [general]
    name = "k"
    backends = ["cpu", "cuda", "rocm", "xpu"]
    [torch]
    [kernel.c]
    backend = "cpu"
    [kernel.g]
    backend = "cuda"
    [kernel.r]
    backend = "rocm"
    [kernel.x]
    backend = "xpu"
  '';
  names = d: system: map (v: v.name) (m.matrix d toml system).variants;
  # the filters kernels-community flakes use, written from their description
  cpuOnlyOnX86 = all: map (v: v // { systems = builtins.filter (s: !(v ? cpu) || s == "x86_64-linux") v.systems; }) all;
  onlyX86 = all: map (v: v // { systems = builtins.filter (s: s == "x86_64-linux") v.systems; }) all;
  xpuNeedsTorch213 = all: builtins.filter (v: !(v ? xpuVersion) || builtins.compareVersions v.torchVersion "2.13" >= 0) all;
  normal = e: { inherit (e) torch backend systems; backendVersion = e.backendVersion or null; bundle = e.bundle or true; cxx11 = e.cxx11 or true; tvmFfi = e.tvmFfi or null; };
  fails = e: !(builtins.tryEval e).success;
in
{
  backendOf = {
    upstreamOrder = {
      expr = map t.backendOf [ { cpu = true; } { cudaVersion = "13.0"; } { metal = true; } { rocmVersion = "7.2"; } { tpu = true; } { xpuVersion = "2025.3.2"; } { cpu = false; } { } ];
      expected = [ "cpu" "cuda" "metal" "rocm" "tpu" "xpu" null null ];
    };
  };
  toUpstream = {
    cuda = {
      expr = t.toUpstream { torch = "2.14"; backend = "cuda"; backendVersion = "13.0"; systems = [ "x86_64-linux" ]; bundle = true; tvmFfi = "0.1"; };
      expected = { torchVersion = "2.14"; cudaVersion = "13.0"; systems = [ "x86_64-linux" ]; bundleBuild = true; tvmFfiVersion = "0.1"; };
    };
    cpu = {
      expr = t.toUpstream { torch = "2.11"; backend = "cpu"; systems = [ "x86_64-linux" ]; bundle = false; };
      expected = { torchVersion = "2.11"; cpu = true; systems = [ "x86_64-linux" ]; bundleBuild = false; };
    };
  };
  fromUpstream = {
    roundTripsEveryBuildSet = {
      expr = map (e: t.fromUpstream "x" (t.toUpstream e)) data.buildSets;
      expected = map normal data.buildSets;
    };
    bundleBuildDefaultsToFalse = { expr = (t.fromUpstream "x" { torchVersion = "2.14"; cpu = true; systems = [ ]; }).bundle; expected = false; };
    noBackendIsAnError = { expr = fails (t.fromUpstream "x" { torchVersion = "2.14"; systems = [ ]; }); expected = true; };
    sourceBuildIsAnError = { expr = fails (t.fromUpstream "x" { torchVersion = "2.14"; cpu = true; systems = [ ]; sourceBuild = true; }); expected = true; };
    extraFieldsAreIgnored = { expr = (t.fromUpstream "x" { torchVersion = "2.12"; cudaVersion = "12.6"; ptxasVersion = "12.8"; systems = [ "x86_64-linux" ]; }).backendVersion; expected = "12.6"; };
  };
  apply = {
    nullKeepsTheData = { expr = t.apply null data; expected = data; };
    identityKeepsTheMatrix = { expr = names (t.apply (all: all) data) null; expected = names data null; };
    emptyGivesNoVariants = { expr = names (t.apply (_: [ ]) data) "x86_64-linux"; expected = [ ]; };
    cpuOnlyOnX86 = {
      expr = { x86 = names (t.apply cpuOnlyOnX86 data) "x86_64-linux"; arm = names (t.apply cpuOnlyOnX86 data) "aarch64-linux"; };
      expected = {
        x86 = names data "x86_64-linux";
        arm = builtins.filter (n: builtins.match ".*-cpu-.*" n == null) (names data "aarch64-linux");
      };
    };
    onlyX86 = { expr = names (t.apply onlyX86 data) "aarch64-linux"; expected = [ ]; };
    xpuFilterDropsOlderTorch = {
      expr = builtins.filter (n: builtins.match ".*-xpu.*" n != null) (names (t.apply xpuNeedsTorch213 data) "x86_64-linux");
      expected = builtins.filter (n: builtins.match "torch2(1[3-9]|[2-9][0-9]).*-xpu.*" n != null) (names data "x86_64-linux");
    };
    notAFunction = { expr = fails (t.apply [ ] data); expected = true; };
    notAList = { expr = fails (t.apply (_: { }) data).buildSets; expected = true; };
  };
  fields = { namesUpstreamFields = { expr = builtins.elem "torchVersion" t.fields && builtins.elem "bundleBuild" t.fields; expected = true; }; };
}
