# The variants of this kernel for one system, as the derivations need them: the matrix
# (matrix.nix, the same rules as the Python matrix) plus, per variant, the build sets that
# could build it, preferred first, each with its toolchain key.
let
  matrix = import ./matrix.nix;
in
rec {
  /* The toolchain key of a build set: the same string
     python/kernel_builder/toolchain/host/discover.py writes into toolchains.json.

     Type: keyOf :: { torch, backend, backendVersion, ... } -> string

     Example:
       keyOf { torch = "2.14"; backend = "cuda"; backendVersion = "13.0"; }
       => "torch2.14-cuda13.0"
  */
  keyOf =
    # a build set (torch, backend and backendVersion are read)
    bs: "torch${bs.torch}-${bs.backend}${if bs.backendVersion == null then "" else bs.backendVersion}";

  /* One record per variant of the matrix for `system`, with the build sets that can build
     it. A noarch variant does not depend on the Torch it is built with: any build set of its
     backend on this system can build it, the matrix's choice first.

     Type: records :: buildSetsJson -> buildToml -> string -> [ { name, kind, backend, bundle, buildSets } ]

     Example:
       map (r: map (bs: bs.key) r.buildSets) (records data (builtins.fromTOML "...noarch...") "x86_64-linux")
       => [ [ "torch2.13-cpu" "torch2.14-cpu" ] ]
  */
  records =
    # the parsed build-sets.json
    buildSetsData:
    # builtins.fromTOML of build.toml
    toml:
    # a Nix system such as "x86_64-linux"
    system:
    let
      withKey = bs: bs // { key = keyOf bs; };
      here = map withKey (builtins.filter (bs: bs.system == system) (matrix.expandBuildSets buildSetsData));
      candidates = v:
        let
          chosen = withKey { inherit (v) torch backend; backendVersion = v.backend_version; };
          others = builtins.filter (bs: bs.backend == v.backend && bs.key != chosen.key) here;
        in
        [ chosen ] ++ (if builtins.elem v.kind [ "noarch" "mlx" ] then others else [ ]);
    in
    map
      (v: {
        inherit (v) name kind backend bundle;
        buildSets = candidates v;
      })
      (matrix.matrix buildSetsData toml system).variants;
}
