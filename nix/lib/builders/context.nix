# What the front end hands to pure evaluation: the recorded toolchain and the kernel's
# identity. `kernel-builder build` writes both into a copy of the builder source under
# state/ and overrides the kernel flake's `kernel-builder` input with that copy; a plain
# checkout has no state/ and gets the fallbacks below.
#
# Type: { builderSrc } -> { toolchain : attrs | null; kernel : attrs | null; testSelect : string | null; testArgs : attrs; buildOptions : attrs; kernelDeps : list; pythonSrc : path }
{ builderSrc }:
let
  # Canonical: Nix 2.26 hands a relative `path:../..` input (the examples') read back from
  # flake.lock the outPath `<source>/examples/relu/../..`, while the `builtins.path` filter
  # below sees canonical paths and measures its prefix by this one's length (an empty
  # Python package otherwise).
  root = toString (/. + builtins.unsafeDiscardStringContext builderSrc.outPath);
  readJSONOr = file: fallback:
    if builtins.pathExists file then builtins.fromJSON (builtins.readFile file) else fallback;

  # What the plan, object, link and variant derivations run (`python -m
  # kernel_builder.driver.{plan,units,run_variant}`) may import: these packages and these
  # top-level (core) modules, exactly their import closure, so that editing the CLI, the
  # flake front end, the loader, the Hub code, the toolchain front end or a core module
  # the driver does not import (`_children.py`, `benchmark.py`, ...) rebuilds no object and
  # no variant. tests/test_boundaries.py holds both lists to the closure, and
  # tests/nix/test_nix_eval.py checks that an edit outside them keeps every derivation.
  variantBuildDirs = [ "backends" "config" "data" "driver" "tree" "variants" ];
  variantBuildModules = [
    "__init__.py" "_eq.py" "_files.py" "_git.py" "_jsontext.py" "_repr.py"
    "errors.py" "identity.py" "ids.py" "pyenv.py" "versions.py"
  ];
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
      && (
        rel == "kernel_builder"
        || (builtins.head parts == "kernel_builder" && (
          (builtins.length parts == 2 && builtins.elem base (if type == "directory" then variantBuildDirs else variantBuildModules))
          || (builtins.length parts > 2 && builtins.elem (builtins.elemAt parts 1) variantBuildDirs)))
      );
  };
in
{
  toolchain = readJSONOr (root + "/state/toolchains.json") null;
  kernel = readJSONOr (root + "/state/kernel.json") null;
  # `kernel-builder test -k EXPR`: the pytest selection of the kernel-test runs (only they
  # read it, so no variant is rebuilt for it).
  testSelect = (readJSONOr (root + "/state/test-args.json") { }).select or null;
  # ... and its time limits (`testTimeout`, `runTimeout`), read by kernel-tests.nix.
  testArgs = readJSONOr (root + "/state/test-args.json") { };
  # Build options of this `kernel-builder build` (`cudaCapabilities`: --cuda-capabilities).
  buildOptions = readJSONOr (root + "/state/build-options.json") { };
  # The locked kernel-depends trees `kernel-builder build` put into the store
  # (kernel-deps.nix): [ { repo-id; name; hash } ].
  kernelDeps = readJSONOr (root + "/state/kernel-deps.json") [ ];
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
