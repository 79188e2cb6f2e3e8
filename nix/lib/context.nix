# What the front end hands to pure evaluation: the recorded toolchain and the kernel's
# identity. `kernel-builder build` writes both into a copy of the builder source under
# state/ and overrides the kernel flake's `kernel-builder` input with that copy; a plain
# checkout has no state/ and gets the fallbacks below.
#
# Type: { builderSrc } -> { toolchain : attrs | null; kernel : attrs | null; pythonSrc : path }
{ builderSrc }:
let
  root = builderSrc.outPath;
  readJSONOr = file: fallback:
    if builtins.pathExists file then builtins.fromJSON (builtins.readFile file) else fallback;

  # Only the parts of the Python package that a variant build imports, so that editing
  # the loader, the layers or the CLI does not rebuild every variant.
  skippedPackages = [ "cli" "hub" "layers" "loader" ];
  pythonRoot = root + "/python";
  pythonSrc = builtins.path {
    name = "kernel-builder-python";
    path = pythonRoot;
    filter = p: type:
      let
        rel = builtins.substring (builtins.stringLength pythonRoot + 1) (-1) (toString p);
        base = baseNameOf p;
        parts = builtins.filter builtins.isString (builtins.split "/" rel);
      in
      base != "__pycache__"
      && builtins.match ".*\\.(pyc|egg-info)" base == null
      && (builtins.head parts == "kernel_builder")
      && !(builtins.length parts >= 2 && builtins.elem (builtins.elemAt parts 1) skippedPackages);
  };
in
{
  toolchain = readJSONOr (root + "/state/toolchains.json") null;
  kernel = readJSONOr (root + "/state/kernel.json") null;
  inherit pythonSrc;
  # The whole Python package (the bundle renders the card with it; cheap to rebuild).
  pythonFullSrc = builtins.path {
    name = "kernel-builder-python-full";
    path = pythonRoot;
    filter = p: type:
      let base = baseNameOf p;
      in base != "__pycache__" && builtins.match ".*\\.(pyc|egg-info)" base == null;
  };
}
