let
  r = import ../pure/variant-records.nix;
  data = {
    buildSets = [
      { torch = "2.13"; backend = "cpu"; systems = [ "x86_64-linux" ]; }
      { torch = "2.14"; backend = "cpu"; systems = [ "x86_64-linux" "aarch64-linux" ]; }
      { torch = "2.14"; backend = "cuda"; backendVersion = "13.0"; systems = [ "x86_64-linux" ]; bundle = false; }
    ];
  };
  general = { name = "k"; backends = [ "cpu" "cuda" ]; };
  arch = { inherit general; torch = { }; kernel = { c = { backend = "cpu"; }; g = { backend = "cuda"; }; }; };
  noarch = { inherit general; torch-noarch = { }; };
  keys = records: map (v: { inherit (v) name; keys = map (bs: bs.key) v.buildSets; }) records;
in
{
  keyOf = {
    cpu = { expr = r.keyOf { torch = "2.13"; backend = "cpu"; backendVersion = null; }; expected = "torch2.13-cpu"; };
    cuda = { expr = r.keyOf { torch = "2.14"; backend = "cuda"; backendVersion = "13.0"; }; expected = "torch2.14-cuda13.0"; };
  };
  records = {
    archVariantHasItsOwnBuildSet = {
      expr = keys (r.records data arch "x86_64-linux");
      expected = [
        { name = "torch213-cxx11-cpu-x86_64-linux"; keys = [ "torch2.13-cpu" ]; }
        { name = "torch214-cxx11-cpu-x86_64-linux"; keys = [ "torch2.14-cpu" ]; }
        { name = "torch214-cxx11-cu130-x86_64-linux"; keys = [ "torch2.14-cuda13.0" ]; }
      ];
    };
    noarchTakesAnyBuildSetOfItsBackendHere = {
      expr = keys (r.records data noarch "x86_64-linux");
      expected = [
        { name = "torch-cpu"; keys = [ "torch2.13-cpu" "torch2.14-cpu" ]; }
        { name = "torch-cuda"; keys = [ "torch2.14-cuda13.0" ]; }
      ];
    };
    otherSystem = {
      expr = keys (r.records data noarch "aarch64-linux");
      expected = [ { name = "torch-cpu"; keys = [ "torch2.14-cpu" ]; } ];
    };
    fields = {
      expr = map (v: { inherit (v) kind backend bundle; }) (r.records data arch "x86_64-linux");
      expected = [
        { kind = "torch"; backend = "cpu"; bundle = true; }
        { kind = "torch"; backend = "cpu"; bundle = true; }
        { kind = "torch"; backend = "cuda"; bundle = false; }
      ];
    };
  };
}
