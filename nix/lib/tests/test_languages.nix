let
  l = import ../pure/languages.nix;
in
{
  backends = {
    everyLanguage = {
      expr = builtins.attrNames l.backends;
      expected = [ "cpp-cpu" "cpp-cuda" "cpp-metal" "cpp-rocm" "cpp-xpu" "rust-cpu" "rust-cuda-oxide" "rust-cutile" ];
    };
    rustCutileIsCuda = { expr = l.backends.rust-cutile; expected = "cuda"; };
  };
  unavailable = {
    gpuRustOnly = { expr = builtins.attrNames l.unavailable; expected = [ "rust-cuda-oxide" "rust-cutile" ]; };
    saysWhere = { expr = builtins.match ".*drbh/cuda-oxide.*" l.unavailable.rust-cuda-oxide != null; expected = true; };
  };
  backendOf = {
    edition5 = { expr = l.backendOf { backend = "cpu"; src = [ ]; }; expected = "cpu"; };
    edition6 = { expr = l.backendOf { language = "cpp-cuda"; src = [ ]; }; expected = "cuda"; };
    rust = { expr = l.backendOf { language = "rust-cpu"; cargo-manifest = "Cargo.toml"; }; expected = "cpu"; };
    neither = { expr = l.backendOf { src = [ ]; }; expected = null; };
    unknownLanguage = { expr = (builtins.tryEval (l.backendOf { language = "cobol-cpu"; })).success; expected = false; };
  };
}
