let
  n = import ../pure/names.nix;
  bs = { torch = "2.13"; backend = "cuda"; backendVersion = "13.0"; system = "x86_64-linux"; cxx11 = true; tvmFfi = "0.1"; };
in
{
  compute = {
    cuda = { expr = n.compute bs; expected = "cu130"; };
    rocm = { expr = n.compute { backend = "rocm"; backendVersion = "7.1"; }; expected = "rocm71"; };
    xpu = { expr = n.compute { backend = "xpu"; backendVersion = "2025.3.2"; }; expected = "xpu20253"; };
    cpu = { expr = n.compute { backend = "cpu"; }; expected = "cpu"; };
    metal = { expr = n.compute { backend = "metal"; backendVersion = null; }; expected = "metal"; };
    missingVersion = { expr = (builtins.tryEval (n.compute { backend = "cuda"; })).success; expected = false; };
  };
  torchName = {
    linux = { expr = n.torchName bs; expected = "torch213-cxx11-cu130-x86_64-linux"; };
    darwin = { expr = n.torchName { torch = "2.12"; backend = "cpu"; system = "aarch64-darwin"; }; expected = "torch212-cpu-aarch64-darwin"; };
    noCxx11 = { expr = n.torchName (bs // { cxx11 = false; }); expected = "torch213-cu130-x86_64-linux"; };
  };
  stableAbiName = {
    cuda = { expr = n.stableAbiName "2.11" (bs // { backendVersion = "12.6"; }); expected = "torch-stable-abi211-cu126-x86_64-linux"; };
  };
  tvmFfiName = {
    cuda = { expr = n.tvmFfiName (bs // { backendVersion = "12.6"; }); expected = "tvm-ffi01-cu126-x86_64-linux"; };
  };
  noarchName = {
    cuda = { expr = n.noarchName "cuda"; expected = "torch-cuda"; };
  };
  mlxName = {
    metal = { expr = n.mlxName "metal"; expected = "mlx-metal"; };
  };
}
