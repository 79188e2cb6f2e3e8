# One variant built per translation unit: plan -> deps -> one object per unit -> link -> variant.
#
#   plan     build.toml, the toolchain, the driver's Python and the *names* of the
#            backend's sources (empty files): `python -m kernel_builder.driver.plan` runs
#            the planner and CMake's configure and writes plan.json (one compile command
#            per unit, the link). No source's contents are an input, so no edit re-plans.
#   deps     the plan and the backend's compiled files and headers: `driver.units deps`
#            preprocesses each unit with the compiler's dependency output and measures its
#            canonical compile (driver/unitdeps.py): the files it reads (kernel files,
#            generated files, store paths), its command without the include directories
#            and prefix maps it reads nothing from, and whether the ops identifier (the
#            kernel's commit) reaches it. Evaluation reads deps.json (import from
#            derivation), so building a variant's derivation builds its plan and deps.
#   object   keyed by what the unit reads: exactly the kernel files it reads (by content),
#            the generated files it reads (their text), the store paths it reads or names
#            (the compiler, torch only when the unit reads torch), the canonical command;
#            no plan, no variant name, no toolchain environment. Variants whose compile of a
#            unit is the same compile (a torch-free unit, every torch version of one
#            toolchain) get one derivation and build it once; a commit rebuilds only the
#            objects it changed and those the ops identifier reaches (the torch binding).
#            A unit that could not be measured (deps.json's "exact": false) is compiled
#            as before: that one source, the backend's other files, the plan, the toolchain.
#   link     the plan and every object: links the module (`driver.units link`).
#   variant  variant.nix as before, given the link output (`run_variant --prebuilt-module`):
#            the package, metadata.json, digest, ABI and import checks.
#
# Which sources are units is known here without the plan (this backend's [torch].src and
# [kernel.*].src with a compiled extension); the link refuses a plan whose units differ.
# Objects are named 0-obj-<kernel>-<variant>-<source, / as ->, where <variant> is the
# variant's name without its torch part (`cxx11-cpu-x86_64-linux`) when the object reads
# and names no torch (it is every torch version's): `kernel-builder build` counts them from
# Nix's output by that rule (object_progress.step_of).
# The name also orders the work: Nix starts the derivations that are ready in the order of
# their names, and `0-obj-` sorts before every kernel's name (kernel names start with a
# letter), so one build of any number of variants, of one kernel or several, compiles every
# object that is ready before any link or check starts (the longest remaining path first);
# the links and checks, which are short, then run beside the last objects and side by side
# at the end, instead of one variant's alone on one core.
#
# Type: { pure; path; config; variant; backend; system; src; pythonSrc; toolchain; kernel; extraAttrs }
#       -> the variant derivation (variant.nix), with passthru-like attrs plan, deps, objects, link
{ pure, path, config, variant, backend, system, src, pythonSrc, toolchain, kernel, extraAttrs ? { } }:
let
  inherit (builtins) any attrNames attrValues concatMap concatStringsSep elem filter foldl' getContext head isAttrs isList
    isString listToAttrs map match replaceStrings split stringLength substring;
  unique = foldl' (acc: x: if elem x acc then acc else acc ++ [ x ]) [ ];
  inputs = pure.inputs.inputPaths config backend;
  # the compiled sources' suffixes are the backend table's (driver/generate.py reads the same)
  inherit (pure.backends) isCompiled;
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
  # The input of an object that could not be measured: a header edit rebuilds every such
  # object of the backend, never fewer.
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
    # One plan for every commit of the kernel: the commands name this placeholder, and the
    # objects the ops identifier reaches and the link put the kernel's unique id in its place.
    uniqueId = uidPlaceholder;
  });
  uidPlaceholder = "kernel_builder_uid_placeholder"; # driver/planfile.py's UID_PLACEHOLDER
  uniqueId = replaceStrings [ "-" ] [ "_" ] kernel.uniqueId;
  # A CUDA variant's units compile with the CUDA compiler made from the CUDA wheels alone
  # (the toolchain's `cudaCompiler`: nix/toolchains/pinned/cuda-compiler.nix; null for a
  # cross toolchain and the host one) where deps measures that they read the same files through it.
  cudaCompiler = if backend == "cuda" then toolchain.cudaCompiler or null else null;
  # One measurement per unit (an edit measures its unit again, a header edit every unit),
  # merged into one deps.json: evaluation realises that one file, and with it every unit's
  # measurement in one build (in parallel), not one import from derivation per unit.
  unitDeps = rel: derivation (common // {
    name = "${config.name}-${variant}-deps-${sanitize rel}";
    step = "deps";
    inherit plan;
    sources = headers;
    unit = rel;
    unitFile = builtins.path { path = path + "/${rel}"; name = sanitize (baseNameOf rel); };
    cudaAlias = if cudaCompiler == null then "" else "${toolchain.parts.cuda}=${cudaCompiler}";
  });
  deps = derivation (common // {
    name = "${config.name}-${variant}-deps";
    step = "merge";
    parts = map unitDeps units;
  });
  measured = builtins.fromJSON (builtins.unsafeDiscardStringContext (builtins.readFile "${deps}/deps.json"));

  # The store paths this variant's steps are given (with their derivations as context), by
  # name: a store path a unit reads becomes an input of its object through its derivation.
  flatten = v: if isList v then concatStringsSep " " (map flatten v)
    else if isAttrs v then (if v ? outPath then toString v.outPath else "")
    else if isString v then v else "";
  contexts = getContext (concatStringsSep " " (map flatten (attrValues (common // planAttrs))
    ++ (if cudaCompiler == null then [ ] else [ (toString cudaCompiler) ])));
  # "/nix/store/<hash>-<name>.drv" or a source path -> "<name>" (what its output is called)
  storeName = p: let m = match "/nix/store/[a-z0-9]{32}-(.*)" p; in if m == null then null else head m;
  outputName = key: let n = storeName key; in
    if n == null then null else if match ".*\\.drv" n != null then substring 0 (stringLength n - 4) n else n;
  byName = foldl' (acc: key: let n = outputName key; in
    if n == null then acc else acc // { ${n} = (acc.${n} or { }) // { ${key} = contexts.${key}; }; }) { } (attrNames contexts);
  withContext = storePath:
    let n = storeName storePath; in
    if n != null && byName ? ${n} then builtins.appendContext storePath byName.${n}
    else throw "kernel-builder: ${config.name} ${variant}: a translation unit reads ${storePath}, which is not one of the toolchain's store paths";

  # The variant's name without its torch part: what every torch version's object of a torch-free unit is named by.
  torchless = let m = match "torch[0-9]+-(.*)" variant; in if m == null then variant else head m;
  envPath = if toolchain ? parts && toolchain.parts ? env then toString toolchain.parts.env else null;
  readsTorch = u: envPath != null && elem envPath u.store_roots;
  exactObject = rel: u:
    let
      tag = if readsTorch u then variant else torchless;
      files = u.kernel_files;
    in
    derivation {
      name = "0-obj-${config.name}-${tag}-${sanitize rel}";
      inherit system;
      builder = toolchain.builder;
      args = [ ./units-builder.sh ];
      outputs = [ "out" ];
      kernelBuilderPython = pythonSrc;
      inherit (toolchain) driverPython;
      sandboxShell = toolchain.env.sandboxShell or "";
      PATH = dirOf toolchain.builder; # the runtime's bash and tools: the compiler is named in full
      SOURCE_DATE_EPOCH = "315532800"; # as variant.nix
      step = "object";
      label = tag;
      # a unit the ops identifier reaches gets the kernel's unique id (this commit's)
      unitJson = builtins.toJSON (u // { command = map (replaceStrings [ uidPlaceholder ] [ uniqueId ]) u.command; });
      passAsFile = [ "unitJson" ];
      # exactly the kernel files the unit reads, by content, at their relative paths
      unitFiles = if files == [ ] then "" else builtins.path {
        inherit path;
        name = "${config.name}-${sanitize rel}-reads";
        filter = p: type:
          let r = substring (stringLength root + 1) (-1) (toString p);
          in if type == "directory" then any (under r) files else elem r files;
      };
      storeInputs = map withContext u.store_roots;
    };
  fallbackObject = rel: derivation (common // {
    name = "0-obj-${config.name}-${variant}-${sanitize rel}";
    step = "object";
    inherit plan headers uniqueId;
    unit = rel;
    unitFile = builtins.path { path = path + "/${rel}"; name = sanitize (baseNameOf rel); };
  });
  objectOf = rel:
    let u = measured.${rel} or null; in
    if u != null && u.exact then exactObject rel u else fallbackObject rel;
  objects = map objectOf units;
  link = derivation (common // {
    name = "${config.name}-${variant}-link";
    step = "link";
    inherit plan objects uniqueId;
  });
in
(import ./variant.nix {
  inherit config variant backend system src pythonSrc toolchain kernel;
  extraAttrs = extraAttrs // { prebuiltModule = link; };
}) // { inherit plan deps objects link headers; }
