# Upstream's `torchVersions` argument over our build sets. A kernel flake written for the
# upstream builder filters or edits a list of records with upstream's field names
# (torchVersion; cudaVersion | rocmVersion | xpuVersion | cpu | metal | tpu; systems;
# bundleBuild; tvmFfiVersion; ptxasVersion). These functions show our build sets
# (build-sets.json: torch, backend, backendVersion, systems, bundle, tvmFfi, cxx11) in that
# shape, read the edited list back, and apply a kernel's function between the two.
let
  inherit (builtins) concatStringsSep filter head isAttrs isFunction isList map;

  # upstream's order of the backend markers, and the field each backend's version lives in
  versionField = { cuda = "cudaVersion"; rocm = "rocmVersion"; xpu = "xpuVersion"; };
  flagBackends = [ "cpu" "metal" "tpu" ];
in
rec {
  /* The backend an upstream record is for: the first of cpu, cuda, metal, rocm, tpu, xpu
     whose marker it carries (upstream's order), or null.

     Type: backendOf :: record -> string | null

     Example:
       backendOf { torchVersion = "2.13"; cudaVersion = "13.0"; systems = [ ]; }
       => "cuda"
  */
  backendOf =
    # an upstream-style record
    record:
    let
      marks = [
        { backend = "cpu"; has = record.cpu or false; }
        { backend = "cuda"; has = record ? cudaVersion; }
        { backend = "metal"; has = record.metal or false; }
        { backend = "rocm"; has = record ? rocmVersion; }
        { backend = "tpu"; has = record.tpu or false; }
        { backend = "xpu"; has = record ? xpuVersion; }
      ];
      found = filter (m: m.has) marks;
    in
    if found == [ ] then null else (head found).backend;

  /* One build-sets.json entry as an upstream record.

     Type: toUpstream :: entry -> record

     Example:
       toUpstream { torch = "2.14"; backend = "cuda"; backendVersion = "13.0"; systems = [ "x86_64-linux" ]; bundle = true; }
       => { torchVersion = "2.14"; cudaVersion = "13.0"; systems = [ "x86_64-linux" ]; bundleBuild = true; }
  */
  toUpstream =
    # an entry of build-sets.json's buildSets
    entry:
    { torchVersion = entry.torch; systems = entry.systems; bundleBuild = entry.bundle or true; }
    // (if builtins.elem entry.backend flagBackends then { ${entry.backend} = true; }
        else { ${versionField.${entry.backend}} = entry.backendVersion; })
    // (if (entry.tvmFfi or null) != null then { tvmFfiVersion = entry.tvmFfi; } else { });

  /* An upstream record as a build-sets.json entry; upstream's rules: bundleBuild defaults
     to false, a record without a backend marker and `sourceBuild = true` are errors.
     `position` names the record in errors.

     Type: fromUpstream :: string -> record -> entry

     Example:
       fromUpstream "record 0" { torchVersion = "2.14"; cpu = true; systems = [ "x86_64-linux" ]; }
       => { torch = "2.14"; backend = "cpu"; backendVersion = null; systems = [ "x86_64-linux" ]; bundle = false; cxx11 = true; tvmFfi = null; }
  */
  fromUpstream =
    # where the record is, for error messages ("torchVersions result, record 3")
    position:
    # an upstream-style record
    record:
    let
      fail = msg: throw "kernel-builder: torchVersions: ${position}: ${msg}";
      backend = backendOf record;
    in
    if !isAttrs record then fail "expected a record such as { torchVersion = \"2.14\"; cpu = true; systems = [ \"x86_64-linux\" ]; }"
    else if !(record ? torchVersion) then fail "has no torchVersion"
    else if !(record ? systems) || !(isList record.systems) then fail "has no systems list"
    else if backend == null then fail "has no backend: set one of cpu = true, cudaVersion, metal = true, rocmVersion, tpu = true, xpuVersion"
    else if record.sourceBuild or false then fail "sourceBuild = true is not supported (torch comes from pinned wheels)"
    else {
      torch = record.torchVersion;
      inherit backend;
      backendVersion = if versionField ? ${backend} then record.${versionField.${backend}} else null;
      systems = record.systems;
      bundle = record.bundleBuild or false;
      cxx11 = true;
      tvmFfi = record.tvmFfiVersion or null;
    };

  /* build-sets.json data with a kernel's `torchVersions` function applied to its build sets
     (null: unchanged). The function gets every build set as an upstream record and returns
     the records to build.

     Type: apply :: (null | ([record] -> [record])) -> buildSetsJson -> buildSetsJson

     Example:
       (apply (_: [ ]) (builtins.fromJSON (builtins.readFile ../../build-sets.json))).buildSets
       => [ ]
  */
  apply =
    # the kernel flake's torchVersions argument, or null
    torchVersions:
    # the parsed build-sets.json
    data:
    if torchVersions == null then data
    else if !(isFunction torchVersions) then
      throw "kernel-builder: torchVersions must be a function taking one argument (the default records) and returning the records to build, e.g. torchVersions = all: builtins.filter (v: v ? cpu) all;"
    else
      let result = torchVersions (map toUpstream data.buildSets); in
      if !(isList result) then throw "kernel-builder: torchVersions must return a list of records, got a ${builtins.typeOf result}"
      else data // {
        buildSets = builtins.genList
          (i: fromUpstream "record ${toString i} of its result" (builtins.elemAt result i))
          (builtins.length result);
      };

  /* The record fields upstream's builder reads, for documentation and error hints.

     Type: fields :: [string]
  */
  fields = [ "torchVersion" "cpu" "cudaVersion" "metal" "rocmVersion" "tpu" "xpuVersion" "systems" "bundleBuild" "tvmFfiVersion" "ptxasVersion" ];
}
