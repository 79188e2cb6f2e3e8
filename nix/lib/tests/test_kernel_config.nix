let
  kc = import ../kernel-config.nix;
  relu = kc ../../../examples/relu;
  noarch = kc ../../../examples/silu-and-mul;
in
{
  kernelConfig = {
    name = { expr = [ relu.name relu.pythonName ]; expected = [ "relu" "relu" ]; };
    backends = { expr = [ relu.backends relu.kernelBackends ]; expected = [ [ "cpu" "cuda" ] [ "cpu" "cuda" ] ]; };
    kernelsFor = { expr = map (k: k.src) (relu.kernelsFor "cuda"); expected = [ [ "relu_cuda/relu.cu" ] ]; };
    placeholders = { expr = relu.placeholdersFor "cpu"; expected = [ "relu_cuda/relu.cu" ]; };
    defaults = { expr = [ relu.pyext relu.extDir relu.hubRepoId ]; expected = [ [ "py" "pyi" ] "torch-ext" "kernels-test/relu" ]; };
    noarchHasNoKernelBackends = { expr = noarch.kernelBackends; expected = [ ]; };
    missingBuildToml = { expr = (builtins.tryEval (kc ./.).name).success; expected = false; };
  };
}
