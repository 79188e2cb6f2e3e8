let
  kc = import ../pure/kernel-config.nix;
  relu = kc ../../../examples/relu;
  noarch = kc ../../../examples/silu-and-mul;
  tvm = kc ./fixtures/tvm-ffi;
  # examples/relu with `language` instead of `backend`: the same facts
  edition6 = kc ./fixtures/edition6;
  mlx = kc ./fixtures/mlx;
in
{
  toml = {
    parsed = { expr = relu.toml.general.name; expected = "relu"; };
    missingBuildToml = { expr = (builtins.tryEval (kc ./.).toml).success; expected = false; };
  };
  name = {
    relu = { expr = relu.name; expected = "relu"; };
    keepsCase = { expr = tvm.name; expected = "My-Kernel"; };
  };
  pythonName = {
    relu = { expr = relu.pythonName; expected = "relu"; };
    dashes = { expr = noarch.pythonName; expected = "silu_and_mul"; };
    lowerCase = { expr = tvm.pythonName; expected = "my_kernel"; };
  };
  backends = {
    relu = { expr = relu.backends; expected = [ "cpu" "cuda" ]; };
  };
  kernelBackends = {
    relu = { expr = relu.kernelBackends; expected = [ "cpu" "cuda" ]; };
    noarchHasNone = { expr = noarch.kernelBackends; expected = [ ]; };
    edition6Language = { expr = edition6.kernelBackends; expected = [ "cpu" "cuda" ]; };
  };
  kernelsFor = {
    cuda = { expr = map (k: k.src) (relu.kernelsFor "cuda"); expected = [ [ "relu_cuda/relu.cu" ] ]; };
    unknownBackend = { expr = relu.kernelsFor "rocm"; expected = [ ]; };
    edition6Language = { expr = map (k: k.src) (edition6.kernelsFor "cuda"); expected = [ [ "relu_cuda/relu.cu" ] ]; };
  };
  framework = {
    torch = { expr = relu.framework.src; expected = relu.toml.torch.src; };
    noarch = { expr = noarch.framework; expected = noarch.toml.torch-noarch; };
    tvmFfi = { expr = tvm.framework.src; expected = [ "tvm-ffi-ext/binding.cpp" ]; };
    mlxNoarch = { expr = mlx.framework; expected = { pyext = [ "py" "metal" ]; }; };
  };
  pyext = {
    default = { expr = relu.pyext; expected = [ "py" "pyi" ]; };
    own = { expr = tvm.pyext; expected = [ "py" "json" ]; };
    mlxNoarch = { expr = mlx.pyext; expected = [ "py" "metal" ]; };
  };
  placeholdersFor = {
    cpu = { expr = relu.placeholdersFor "cpu"; expected = [ "relu_cuda/relu.cu" ]; };
    cuda = { expr = relu.placeholdersFor "cuda"; expected = [ "relu_cpu/relu_cpu.cpp" ]; };
    edition6Language = { expr = map edition6.placeholdersFor [ "cpu" "cuda" ]; expected = map relu.placeholdersFor [ "cpu" "cuda" ]; };
  };
  hubRepoId = {
    relu = { expr = relu.hubRepoId; expected = "kernels-test/relu"; };
    none = { expr = tvm.hubRepoId; expected = null; };
  };
  extDir = {
    torch = { expr = relu.extDir; expected = "torch-ext"; };
    tvmFfi = { expr = tvm.extDir; expected = "tvm-ffi-ext"; };
  };
}
