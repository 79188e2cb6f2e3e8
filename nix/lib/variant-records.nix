# The variants of this kernel for one system, as the derivations need them: the matrix
# (matrix.nix, the same rules as the Python matrix) plus, per variant, the build sets that
# could build it, preferred first, each with its toolchain key.
#
# Type: { config; system; buildSetsFile } -> [ { name; kind; backend; bundle; buildSets } ]
{ config, system, buildSetsFile }:
let
  matrix = import ./matrix.nix;
  data = builtins.fromJSON (builtins.readFile buildSetsFile);
  # The toolchain key of a build set: "torch2.13-cpu", "torch2.14-cuda13.0" (the same
  # string python/kernel_builder/toolchain/discover.py writes).
  keyOf = bs: "torch${bs.torch}-${bs.backend}${if bs.backendVersion == null then "" else bs.backendVersion}";
  withKey = bs: bs // { key = keyOf bs; };
  here = map withKey (builtins.filter (bs: bs.system == system) (matrix.expandBuildSets data));
  result = matrix.matrix data config.toml system;
  # A noarch variant does not depend on the Torch it is built with: any build set of its
  # backend on this system can build it, the matrix's choice first.
  candidates = v:
    let
      chosen = withKey { inherit (v) torch backend; backendVersion = v.backend_version; };
      others = builtins.filter (bs: bs.backend == v.backend && bs.key != chosen.key) here;
    in
    [ chosen ] ++ (if v.kind == "noarch" then others else [ ]);
in
map
  (v: {
    inherit (v) name kind backend bundle;
    buildSets = candidates v;
  })
  result.variants
