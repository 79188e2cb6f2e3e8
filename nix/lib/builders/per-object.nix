# One variant built per translation unit: plan -> one object per unit -> link -> variant.
#
#   plan     build.toml, the toolchain, the driver's Python and the *names* of the
#            backend's sources (empty files): `python -m kernel_builder.driver.plan` runs
#            the planner and CMake's configure and writes plan.json (one compile command
#            per unit, the link). No source's contents are an input, so no edit re-plans.
#   object   that one source (builtins.path of exactly that file), the backend's other
#            files (headers, and a compiled file another source #includes), the plan and
#            the toolchain: compiles that unit (`driver.units object`).
#   link     the plan and every object: links the module (`driver.units link`).
#   variant  variant.nix as before, given the link output (`run_variant --prebuilt-module`):
#            the package, metadata.json, digest, ABI and import checks.
#
# Which sources are units is known here without the plan (this backend's [torch].src and
# [kernel.*].src with a compiled extension), so evaluation builds nothing; the link refuses
# a plan whose units differ. Objects are named 0-obj-<kernel>-<variant>-<source, / as ->:
# `kernel-builder build` counts them from Nix's output by that rule (object_progress.step_of).
# The name also orders the work: Nix starts the derivations that are ready in the order of
# their names, and `0-obj-` sorts before every kernel's name (kernel names start with a
# letter), so one build of any number of variants, of one kernel or several, compiles every
# object that is ready before any link or check starts (the longest remaining path first);
# the links and checks, which are short, then run beside the last objects and side by side
# at the end, instead of one variant's alone on one core.
#
# Type: { pure; path; config; variant; backend; system; src; pythonSrc; toolchain; kernel; extraAttrs }
#       -> the variant derivation (variant.nix), with passthru-like attrs plan, objects, link
{ pure, path, config, variant, backend, system, src, pythonSrc, toolchain, kernel, extraAttrs ? { } }:
let
  inherit (builtins) concatMap elem filter foldl' head isString map match replaceStrings split;
  unique = foldl' (acc: x: if elem x acc then acc else acc ++ [ x ]) [ ];
  inputs = pure.inputs.inputPaths config backend;
  isCompiled = rel: match ".*\\.(c|cc|cpp|cxx|cu|hip|mm)" rel != null;
  isPython = rel: match ("(.*/)?[^/]*\\.(" + builtins.concatStringsSep "|" config.pyext + ")") rel != null;
  isHeader = rel: match ".*\\.(h|hh|hpp|hxx|cuh|inc|inl|ipp|tcc)" rel != null;
  under = dir: rel: rel == dir || builtins.substring 0 (builtins.stringLength dir + 1) rel == dir + "/";
  # Only the Python package's own files (.py, data) stay out of the objects' input, so that
  # editing them compiles nothing again. A header is an input even when `pyext` ships it in
  # the package too (deep-gemm's pyext has "hpp" and "h" for its JIT), as is every file the
  # backend lists or an include directory holds.
  packageOnly = rel: isPython rel && !(isHeader rel) && !(elem rel inputs.files)
    && !(builtins.any (dir: under dir rel) inputs.includeDirs);
  units = unique (filter isCompiled inputs.files);
  names = unique (filter (f: f != "build.toml") inputs.files ++ config.placeholdersFor backend);

  # `#include "x"` names of every unit: a compiled file that is included is a header too.
  includesOf = rel:
    let
      lines = filter isString (split "\n" (builtins.readFile (path + "/${rel}")));
      found = map (match "[[:space:]]*#[[:space:]]*include[[:space:]]*\"([^\"]+)\".*") lines;
    in
    map (m: baseNameOf (head m)) (filter (m: m != null) found);
  included = unique (concatMap includesOf units);

  root = toString path;
  keep = pure.inputs.keepSource config backend;
  # Every object's input: a header edit rebuilds every object of the backend, never fewer.
  headers = builtins.path {
    inherit path;
    name = "${config.name}-${backend}-headers";
    filter = p: type:
      let rel = builtins.substring (builtins.stringLength root + 1) (-1) (toString p);
      in keep rel type && (type == "directory" || (
        rel != "build.toml" && !(packageOnly rel) && (!(isCompiled rel) || elem (baseNameOf rel) included)));
  };

  # A store name holds only [A-Za-z0-9+._?=-]: `/` becomes `-`, anything else `_`.
  sanitize = rel: builtins.concatStringsSep "_"
    (filter isString (split "[^A-Za-z0-9+._?=-]" (replaceStrings [ "/" ] [ "-" ] rel)));
  # The driver's Python and the toolchain, as variant.nix has them; toolchain.env unchanged
  # (a cross toolchain's settings reach every step).
  common = toolchain.identity // toolchain.env // {
    inherit system;
    builder = toolchain.builder;
    args = [ ./units-builder.sh ];
    outputs = [ "out" ];
    kernelBuilderPython = pythonSrc;
    inherit (toolchain) driverPython toolchainPython;
    toolchainProvider = toolchain.identity.toolchainProvider;
    SOURCE_DATE_EPOCH = "315532800"; # as variant.nix
  };
  # The variant's build options (C++ dependencies, --cuda-capabilities) shape the commands;
  # what only the assembly reads (the import check's switch and Python path, the build
  # layout) stays out of the plan, so changing them re-links nothing.
  planAttrs = removeAttrs extraAttrs [ "noImportCheck" "KERNEL_BUILDER_IMPORT_PATH" "KERNEL_BUILDER_KERNEL_DEPS" "KERNEL_BUILDER_BUILD_LAYOUT" ];
  plan = derivation (planAttrs // common // {
    name = "${config.name}-${variant}-plan";
    step = "plan";
    inherit variant;
    buildToml = builtins.path { path = path + "/build.toml"; name = "build.toml"; };
    sourceNames = names;
    uniqueId = kernel.uniqueId;
  });
  objectOf = rel: derivation (common // {
    name = "0-obj-${config.name}-${variant}-${sanitize rel}";
    step = "object";
    inherit plan headers;
    unit = rel;
    unitFile = builtins.path { path = path + "/${rel}"; name = sanitize (baseNameOf rel); };
  });
  objects = map objectOf units;
  link = derivation (common // {
    name = "${config.name}-${variant}-link";
    step = "link";
    inherit plan objects;
  });
in
(import ./variant.nix {
  inherit config variant backend system src pythonSrc toolchain kernel;
  extraAttrs = extraAttrs // { prebuiltModule = link; };
}) // { inherit plan objects link; }
