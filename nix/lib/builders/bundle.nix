# The bundle: every buildable bundle variant joined into one tree, plus benchmarks/ and
# the rendered card, as `bundle/<variant>/...` (each variant output already holds one
# top-level directory named after the variant).
#
# Type: { config; system; path; context; kernel; shell : { builder; PATH; driverPython };
#         variants : [ { name; drv } ] } -> derivation
{ config, system, path, context, kernel, shell, variants }:
let
  root = toString path;
  extras = builtins.path {
    inherit path;
    name = "${config.name}-bundle-source";
    filter = p: type:
      let rel = builtins.substring (builtins.stringLength root + 1) (-1) (toString p);
      in rel == "build.toml" || rel == "CARD.md" || rel == "benchmarks"
        || (builtins.substring 0 11 rel == "benchmarks/" && baseNameOf p != "__pycache__");
  };
in
derivation {
  name = "${config.name}-bundle";
  inherit system extras;
  inherit (shell) builder driverPython PATH;
  args = [ ./bundle-builder.sh ];
  outputs = [ "out" ];
  kernelBuilderPython = context.pythonFullSrc;
  renderCard = ./render-card.py;
  variantOutputs = map (v: v.drv) variants;
  variantNames = map (v: v.name) variants;
  preferLocalBuild = true;
  SOURCE_DATE_EPOCH = "315532800"; # as variant.nix: no output depends on the day it was built
  allowSubstitutes = false;
}
