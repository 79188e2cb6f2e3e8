# Builder of a check derivation (see check.nix).
set -euo pipefail
export HOME="$NIX_BUILD_TOP/home"
mkdir -p "$HOME"
export PYTHONPATH="$kernelBuilderPython"
export PYTHONDONTWRITEBYTECODE=1
if [ "${noImport:-}" = 1 ]; then
  "$driverPython" -m kernel_builder check --no-import "$tree"  # doGetKernelCheck = false
else
  "$driverPython" -m kernel_builder check --python "$toolchainPython" "$tree"
fi
echo "$variant: checks passed" > "$out"
