let
  i = import ../pure/inputs.nix;
  config = {
    framework = { src = [ "torch-ext/torch_binding.cpp" ]; include = [ "./common" "." ]; };
    kernelsFor = backend:
      if backend == "cuda" then [ { src = [ "k/a.cu" ]; include = [ "k/inc" ]; } ]
      else if backend == "cpu" then [ { src = [ "k/a.cpp" ]; } ]
      else [ ];
    extDir = "torch-ext";
  };
in
{
  relativeDir = {
    dotSlash = { expr = i.relativeDir "./csrc/include"; expected = "csrc/include"; };
    plain = { expr = i.relativeDir "inc"; expected = "inc"; };
    self = { expr = map i.relativeDir [ "." "./" ]; expected = [ "" "" ]; };
  };
  inputPaths = {
    cuda = {
      expr = i.inputPaths config "cuda";
      expected = { files = [ "build.toml" "torch-ext/torch_binding.cpp" "k/a.cu" ]; includeDirs = [ "common" "k/inc" ]; extDir = "torch-ext"; };
    };
    frameworkIncludeForEveryBackend = { expr = (i.inputPaths config "cpu").includeDirs; expected = [ "common" ]; };
    noKernels = { expr = (i.inputPaths config "metal").files; expected = [ "build.toml" "torch-ext/torch_binding.cpp" ]; };
    cargoManifestAfterSources = {
      expr = (i.inputPaths {
        framework = { };
        extDir = "tvm-ffi-ext";
        kernelsFor = _: [ { src = [ "r/src/lib.rs" ]; cargo-manifest = "r/Cargo.toml"; } { src = [ "s/lib.rs" ]; } ];
      } "cpu").files;
      expected = [ "build.toml" "r/src/lib.rs" "s/lib.rs" "r/Cargo.toml" ];
    };
    rustSrcEntersWhole = {
      expr = (i.inputPaths {
        framework = { };
        extDir = "tvm-ffi-ext";
        kernelsFor = _: [ { language = "rust-cpu"; src = [ "Cargo.lock" "r/src" "vendor" ]; cargo-manifest = "r/Cargo.toml"; } ];
      } "cpu").includeDirs;
      expected = [ "Cargo.lock" "r/src" "vendor" ];
    };
  };
  isRust = {
    rust = { expr = map i.isRust [ { language = "rust-cpu"; } { language = "rust-cutile"; } ]; expected = [ true true ]; };
    cpp = { expr = map i.isRust [ { language = "cpp-cpu"; } { backend = "cpu"; } ]; expected = [ false false ]; };
  };
  keepSource = let keep = i.keepSource (config // { pyext = [ "py" "pyi" ]; }) "cuda"; in {
    listedFiles = { expr = map (rel: keep rel "regular") [ "build.toml" "k/a.cu" "k/a.cpp" "NOTES.md" ]; expected = [ true true false false ]; };
    directoriesAboveInputs = { expr = map (rel: keep rel "directory") [ "k" "torch-ext" "docs" ]; expected = [ true true false ]; };
    includeDirsWhole = { expr = map (rel: keep rel "regular") [ "k/inc/x.h" "common/deep/y.h" "k/incx/z.h" ]; expected = [ true true false ]; };
    extensionFilesByPyext = {
      expr = map (rel: keep rel "regular") [ "torch-ext/k/__init__.py" "torch-ext/k/ops.pyi" "torch-ext/k/notes.txt" ];
      expected = [ true true false ];
    };
    neverCachesOrBuildDirs = { expr = map (rel: keep rel "directory") [ "torch-ext/k/__pycache__" "build" "torch-ext/build" ]; expected = [ false false false ]; };
  };
}
