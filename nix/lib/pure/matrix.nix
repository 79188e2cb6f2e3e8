# The build matrix in Nix: (build-sets.json, parsed build.toml, system) -> variants.
# Same rules, order and reasons as python/kernel_builder/variants/matrix.py (see its
# docstring and docs/variants.md); tests/variants compares the two on many build.toml files.
# Builtins only (no nixpkgs), in the style of pyproject.nix: small curried functions.
let
  versions = import ./versions.nix;
  names = import ./names.nix;
  inherit (import ./languages.nix) backendOf;
  inherit (builtins) filter map elem length head concatMap foldl' listToAttrs attrNames;
in
rec {
  /* One build set per (entry, system), in file order.

     Type: expandBuildSets :: { buildSets = [entry]; } -> [buildSet]

     Example:
       expandBuildSets { buildSets = [ { torch = "2.13"; backend = "cpu"; systems = [ "a" "b" ]; } ]; }
       => [ { torch = "2.13"; backend = "cpu"; system = "a"; ... } { ...; system = "b"; } ]
  */
  expandBuildSets =
    # the parsed build-sets.json
    data:
    concatMap
      (entry: map
        (system: {
          inherit system;
          inherit (entry) torch backend;
          backendVersion = entry.backendVersion or null;
          bundle = entry.bundle or true;
          cxx11 = entry.cxx11 or true;
          tvmFfi = entry.tvmFfi or null;
        })
        entry.systems)
      data.buildSets;

  /* Sorted, de-duplicated systems of a build-set list.

     Type: systemsOf :: [buildSet] -> [string]
  */
  systemsOf =
    # expanded build sets
    sets:
    builtins.sort builtins.lessThan
      (attrNames (listToAttrs (map (s: { name = s.system; value = true; }) sets)));

  /* The facts of a parsed build.toml the matrix needs. Unset bounds come from the build
     sets file's `defaultBounds` (null: unbounded).

     Type: kernelConfigWith :: defaultBounds -> attrset -> { backends, framework, kernelBackends, stableAbiFor, torchMin, torchMax, cudaMin, cudaMax }

     Example:
       (kernelConfigWith { } (builtins.fromTOML "[general]\nbackends = [\"cpu\"]\n[torch]\n")).framework
       => "torch"
  */
  kernelConfigWith =
    # `defaultBounds` of build-sets.json: { torch = { minver; maxver; }; cuda = { ... }; }
    bounds:
    # builtins.fromTOML of build.toml
    toml:
    let
      general = toml.general or (throw "kernel-builder: build.toml has no [general] table");
      torch = toml.torch or { };
      stable = torch."stable-abi" or null;
      cuda = general.cuda or { };
    in
    {
      backends = general.backends or (throw "kernel-builder: build.toml has no general.backends; run `kernel-builder update-build`");
      framework =
        if toml ? torch then "torch"
        else if toml ? "tvm-ffi" then "tvm-ffi"
        else if toml ? "mlx-noarch" then "mlx-noarch"
        else "torch-noarch";
      kernelBackends = map backendOf (builtins.attrValues (toml.kernel or { }));
      stableAbiFor = backend:
        if !(toml ? torch) || stable == null then null
        else if builtins.isString stable then stable
        else stable.${backend} or null;
      torchMin = torch.minver or bounds.torch.minver or null;
      torchMax = torch.maxver or bounds.torch.maxver or null;
      cudaMin = cuda.minver or bounds.cuda.minver or null;
      cudaMax = cuda.maxver or bounds.cuda.maxver or null;
    };

  /* `kernelConfigWith` without default bounds.

     Type: kernelConfig :: attrset -> { ... }
  */
  kernelConfig = kernelConfigWith { };

  /* A build set's short human name: "torch 2.13 cuda 13.0 x86_64-linux".

     Type: label :: buildSet -> string
  */
  label =
    # an expanded build set
    bs:
    let backend = if bs.backendVersion == null then bs.backend else "${bs.backend} ${bs.backendVersion}";
    in "torch ${bs.torch} ${backend} ${bs.system}";

  /* Why a build set does not apply, or null when it does.

     Type: filterReason :: kernelConfig -> buildSet -> string | null
  */
  filterReason =
    # from kernelConfig
    cfg:
    # an expanded build set
    bs:
    let
      cmp = versions.compare;
      show = versions.show;
    in
    if !(elem bs.backend cfg.backends) then
      "backend ${bs.backend} not in general.backends (${if cfg.backends == [ ] then "none" else builtins.concatStringsSep ", " cfg.backends})"
    else if cfg.framework == "tvm-ffi" && bs.tvmFfi == null then "no tvm-ffi version in this build set"
    else if bs.backend == "cuda" && cfg.cudaMin != null && cmp bs.backendVersion cfg.cudaMin < 0 then
      "cuda ${bs.backendVersion} < [general.cuda].minver ${show cfg.cudaMin}"
    else if bs.backend == "cuda" && cfg.cudaMax != null && cmp bs.backendVersion cfg.cudaMax > 0 then
      "cuda ${bs.backendVersion} > [general.cuda].maxver ${show cfg.cudaMax}"
    else if cfg.framework == "torch" && cfg.torchMin != null && cmp bs.torch cfg.torchMin < 0 then
      "torch ${bs.torch} < [torch].minver ${show cfg.torchMin}"
    else if cfg.framework == "torch" && cfg.torchMax != null && cmp bs.torch cfg.torchMax > 0 then
      "torch ${bs.torch} > [torch].maxver ${show cfg.torchMax}"
    else null;

  /* The variant a build set gives (no filtering) and its kind.

     Type: variantFor :: kernelConfig -> buildSet -> { name, kind }
  */
  variantFor =
    # from kernelConfig
    cfg:
    # an expanded build set
    bs:
    let
      abi = cfg.stableAbiFor bs.backend;
      isArch = cfg.framework == "torch" && elem bs.backend cfg.kernelBackends;
    in
    if cfg.framework == "tvm-ffi" then { name = names.tvmFfiName bs; kind = "tvm-ffi"; }
    else if cfg.framework == "mlx-noarch" then { name = names.mlxName bs.backend; kind = "mlx"; }
    else if bs.backend == "tpu" || !isArch then { name = names.noarchName bs.backend; kind = "noarch"; }
    else if abi != null then { name = names.stableAbiName abi bs; kind = "torch-stable-abi"; }
    else { name = names.torchName bs; kind = "torch"; };

  /* The matrix: ordered variants and the skipped build sets with reasons.

     Type: matrix :: buildSetsJson -> buildToml -> (string | null) -> { variants, skipped, decisions }

     Example:
       (matrix (builtins.fromJSON (builtins.readFile ../../build-sets.json))
               (builtins.fromTOML (builtins.readFile ./build.toml)) "x86_64-linux").variants
       => [ { name = "torch213-cxx11-cpu-x86_64-linux"; system = "x86_64-linux"; backend = "cpu"; ... } ... ]
  */
  matrix =
    # the parsed build-sets.json
    buildSetsData:
    # builtins.fromTOML of build.toml
    toml:
    # a Nix system such as "x86_64-linux"; null or "all" for every system
    system:
    let
      cfg = kernelConfigWith (buildSetsData.defaultBounds or { }) toml;
      all = expandBuildSets buildSetsData;
      candidates =
        if system == null || system == "all"
        then concatMap (s: filter (bs: bs.system == s) all) (systemsOf all)
        else filter (bs: bs.system == system) all;
      indexed = builtins.genList (i: { index = i; bs = builtins.elemAt candidates i; reason = filterReason cfg (builtins.elemAt candidates i); }) (length candidates);
      kept = filter (c: c.reason == null) indexed;
      groupKey = bs: "${bs.system}/${bs.backend}/${if bs.backendVersion == null then "" else bs.backendVersion}";
      # stable ABI: the first kept set with the newest torch in its group wins
      winnerOf = c:
        let
          group = filter (o: groupKey o.bs == groupKey c.bs) kept;
          best = foldl' (acc: o: if acc == null || versions.compare acc.bs.torch o.bs.torch < 0 then o else acc) null group;
        in best;
      decided = map
        (c:
          if c.reason != null then c
          else if cfg.stableAbiFor c.bs.backend != null && (winnerOf c).index != c.index
          then c // { reason = "stable ABI: superseded by torch ${(winnerOf c).bs.torch}"; }
          else c)
        indexed;
      included = filter (c: c.reason == null) decided;
      withNames = map (c: c // { variant = variantFor cfg c.bs; }) included;
      # group by name in first-occurrence order
      order = foldl' (acc: c: if elem c.variant.name acc then acc else acc ++ [ c.variant.name ]) [ ] withNames;
      setsOf = name: filter (c: c.variant.name == name) withNames;
      mkVariant = name:
        let
          members = setsOf name;
          bundles = filter (c: c.bs.bundle) members;
          chosen = if bundles != [ ] then head bundles else head members;
          v = chosen.variant;
        in
        {
          inherit name;
          inherit (v) kind;
          # noarch variants (torch-<b>, mlx-<b>) run anywhere
          system = if elem v.kind [ "noarch" "mlx" ] then null else chosen.bs.system;
          backend = chosen.bs.backend;
          backend_version = chosen.bs.backendVersion;
          torch = chosen.bs.torch;
          bundle = bundles != [ ];
          build_set = label chosen.bs;
        };
      firstOf = name: head (setsOf name);
      decisionOf = c:
        if c.reason != null then { build_set = label c.bs; reason = c.reason; variant = null; }
        else
          let
            name = (variantFor cfg c.bs).name;
            first = firstOf name;
          in
          {
            build_set = label c.bs;
            variant = name;
            reason = if first.index == c.index then "in" else "in (same variant as ${label first.bs})";
          };
    in
    {
      variants = map mkVariant order;
      skipped = map (c: { build_set = label c.bs; inherit (c) reason; }) (filter (c: c.reason != null) decided);
      decisions = map decisionOf decided;
    };
}
