# The choices behind the CI outputs of a kernel flake (upstream's backendCi, ci-test,
# archVariants and lib.allBuildVariantsJSON; docs/nix.md "CI outputs"): which variant
# stands for a backend, which one ci-test runs, and the variant names a build-set list
# gives. Builtins only; the derivations are in ../builders.
let
  inherit (builtins) attrNames concatMap elem filter foldl' head listToAttrs map sort;
  versions = import ./versions.nix;
  names = import ./names.nix;
  matrix = import ./matrix.nix;

  # upstream's preference among backends for the one ci-test variant
  backendRank = { cuda = 0; rocm = 1; xpu = 2; metal = 3; };
  rankOf = backend: backendRank.${backend} or 4;
  unique = foldl' (acc: x: if elem x acc then acc else acc ++ [ x ]) [ ];
  cmpVersion = a: b:
    if a == b then 0 else if a == null then -1 else if b == null then 1 else versions.compare a b;
in
rec {
  /* Whether variant `a` is preferred to `b` as a backend's representative: a bundle
     variant first, then the newer torch, then the older backend version (the widest
     compatibility), as upstream orders its build sets.

     Type: ciBefore :: { bundle, torch, backendVersion } -> { bundle, torch, backendVersion } -> bool

     Example:
       ciBefore { bundle = true; torch = "2.14"; backendVersion = "13.0"; } { bundle = true; torch = "2.13"; backendVersion = "12.6"; }
       => true
  */
  ciBefore =
    # a variant record (bundle, torch, backendVersion are read)
    a:
    # another one
    b:
    if a.bundle != b.bundle then a.bundle
    else if versions.compare a.torch b.torch != 0 then versions.compare a.torch b.torch > 0
    else cmpVersion a.backendVersion b.backendVersion < 0;

  /* Whether `a` is preferred to `b` as the one variant ci-test runs: a bundle variant
     first, then by backend (cuda, rocm, xpu, metal, the others), then as ciBefore.

     Type: testBefore :: { bundle, backend, torch, backendVersion } -> { ... } -> bool

     Example:
       testBefore { bundle = true; backend = "cuda"; torch = "2.13"; backendVersion = "13.0"; } { bundle = true; backend = "cpu"; torch = "2.14"; backendVersion = null; }
       => true
  */
  testBefore =
    # a variant record (bundle, backend, torch, backendVersion are read)
    a:
    # another one
    b:
    if a.bundle != b.bundle then a.bundle
    else if rankOf a.backend != rankOf b.backend then rankOf a.backend < rankOf b.backend
    else ciBefore a b;

  /* The representative of each backend among `records`: the first by ciBefore.

     Type: representatives :: [ { backend, bundle, torch, backendVersion, ... } ] -> { <backend> = record; }

     Example:
       builtins.mapAttrs (_: r: r.torch) (representatives [
         { backend = "cpu"; bundle = true; torch = "2.13"; backendVersion = null; }
         { backend = "cpu"; bundle = true; torch = "2.14"; backendVersion = null; } ])
       => { cpu = "2.14"; }
  */
  representatives =
    # variant records
    records:
    listToAttrs (map
      (backend: {
        name = backend;
        value = head (sort ciBefore (filter (r: r.backend == backend) records));
      })
      (unique (map (r: r.backend) records)));

  /* The variant ci-test runs: the first of `records` by testBefore, or null for none.

     Type: testPick :: [ record ] -> record | null

     Example:
       (testPick [ { backend = "cpu"; bundle = true; torch = "2.14"; backendVersion = null; name = "a"; }
                   { backend = "cuda"; bundle = true; torch = "2.13"; backendVersion = "13.0"; name = "b"; } ]).name
       => "b"
  */
  testPick =
    # variant records
    records:
    if records == [ ] then null else head (sort testBefore records);

  /* Upstream's archVariants for one system: for each build set the kernel is built with,
     the torch arch name of that build set (a noarch variant such as torch-cpu stands for
     one arch name per applicable build set; other kinds are their own name). First
     occurrence order, no repeats.

     Type: archVariants :: buildSetsJson -> buildToml -> string -> [ string ]

     Example:
       archVariants data (builtins.fromTOML "...noarch cpu kernel...") "x86_64-linux"
       => [ "torch213-cxx11-cpu-x86_64-linux" "torch214-cxx11-cpu-x86_64-linux" ]
  */
  archVariants =
    # the parsed build-sets.json
    buildSetsData:
    # builtins.fromTOML of build.toml
    toml:
    # a Nix system such as "x86_64-linux"
    system:
    let
      cfg = matrix.kernelConfigWith (buildSetsData.defaultBounds or { }) toml;
      here = filter (bs: bs.system == system && matrix.filterReason cfg bs == null) (matrix.expandBuildSets buildSetsData);
      kept = map (v: v.name) (matrix.matrix buildSetsData toml system).variants;
      nameOf = bs:
        let v = matrix.variantFor cfg bs; in
        if v.kind != "noarch" then (if elem v.name kept then [ v.name ] else [ ])
        else if bs.backend == "tpu" then [ v.name ]
        else [ (names.torchName bs) ];
    in
    unique (concatMap nameOf here);

  /* Upstream's lib.allBuildVariantsJSON, before toJSON: the torch arch name of every
     bundle build set, by system and backend (TPU's noarch torch-tpu), in build-set order.

     Type: allBuildVariants :: buildSetsJson -> { <system> = { <backend> = [ string ]; }; }

     Example:
       (allBuildVariants data).x86_64-linux.cpu
       => [ "torch212-cxx11-cpu-x86_64-linux" "torch213-cxx11-cpu-x86_64-linux" ... ]
  */
  allBuildVariants =
    # the parsed build-sets.json
    buildSetsData:
    let
      sets = filter (bs: bs.bundle) (matrix.expandBuildSets buildSetsData);
      nameOf = bs: if bs.backend == "tpu" then names.noarchName "tpu" else names.torchName bs;
      systems = matrix.systemsOf sets;
      backendsOf = system: unique (map (bs: bs.backend) (filter (bs: bs.system == system) sets));
    in
    listToAttrs (map
      (system: {
        name = system;
        value = listToAttrs (map
          (backend: {
            name = backend;
            value = unique (map nameOf (filter (bs: bs.system == system && bs.backend == backend) sets));
          })
          (backendsOf system));
      })
      systems);
}
