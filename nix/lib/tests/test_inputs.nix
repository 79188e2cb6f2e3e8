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
  };
}
