let
  b = import ../pure/backends.nix;
in
{
  names = {
    builtIn = { expr = builtins.filter (n: builtins.elem n [ "cpu" "cuda" "rocm" "xpu" "metal" ]) b.names; expected = [ "cpu" "cuda" "rocm" "xpu" "metal" ]; };
  };
  prefixes = {
    versioned = { expr = b.prefixes; expected = { cuda = "cu"; rocm = "rocm"; xpu = "xpu"; cann = "cann"; }; };
  };
  compiledSuffixes = {
    table = { expr = b.compiledSuffixes; expected = [ "c" "cc" "cpp" "cxx" "cu" "hip" "mm" "metal" ]; };
  };
  languages = {
    table = {
      expr = b.languages;
      expected = {
        "cpp-cpu" = "cpu"; "cpp-cuda" = "cuda"; "cpp-rocm" = "rocm"; "cpp-xpu" = "xpu"; "cpp-metal" = "metal";
        "rust-cpu" = "cpu"; "rust-cuda-oxide" = "cuda"; "rust-cutile" = "cuda";
      };
    };
  };
  isCompiled = {
    cpp = { expr = b.isCompiled "csrc/relu.cpp"; expected = true; };
    metal = { expr = b.isCompiled "relu_metal/relu.metal"; expected = true; };
    header = { expr = b.isCompiled "csrc/relu.h"; expected = false; };
    python = { expr = b.isCompiled "torch-ext/relu/__init__.py"; expected = false; };
  };
}
