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

  # Only the modules the one-variant build (`python -m kernel_builder.variant_build.run_variant`)
  # imports, so that editing the CLI, the loader, the Hub code, variant resolution or
  # toolchain setup rebuilds no variant. tests/nix/test_nix_eval.py checks this list against
  # the import closure of run_variant and that a change outside it keeps every derivation.
  variantBuildDirs = [ "config" "data" "variant_build" ];
  variantBuildFiles = [
    "__init__.py" "_files.py" "_git.py" "_jsontext.py" "_source.py" "digest.py" "errors.py" "ids.py"
    "layout.py" "metadata.py" "toolchain/__init__.py" "toolchain/lockrequests.py"
    "variants/__init__.py" "variants/buildsets.py" "variants/host.py" "variants/names.py" "variants/selection.py"
  ];
  variantBuildParents = [ "toolchain" "variants" ];
  notVariantBuild = [ "config/update.py" ];  # update-build: CLI only
  pythonRoot = root + "/python";
  pythonSrc = builtins.path {
    name = "kernel-builder-python";
    path = pythonRoot;
    filter = p: type:
      let
        rel = builtins.substring (builtins.stringLength pythonRoot + 1) (-1) (toString p);
        base = baseNameOf p;
        parts = builtins.filter builtins.isString (builtins.split "/" rel);
        inPackage = builtins.substring (builtins.stringLength "kernel_builder/") (-1) rel;
      in
      base != "__pycache__"
      && builtins.match ".*\\.(pyc|egg-info)" base == null
      && !(builtins.elem inPackage notVariantBuild)
      && (
        rel == "kernel_builder"
        || (builtins.head parts == "kernel_builder" && builtins.length parts >= 2 && (
          builtins.elem (builtins.elemAt parts 1) variantBuildDirs
          || builtins.elem inPackage variantBuildFiles
          || (type == "directory" && builtins.elem inPackage variantBuildParents)))
      );
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
