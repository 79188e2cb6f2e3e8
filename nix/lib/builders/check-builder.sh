# Builder of a check derivation (see check.nix).
set -euo pipefail
export HOME="$NIX_BUILD_TOP/home"
mkdir -p "$HOME"
export PYTHONPATH="$kernelBuilderPython"
export PYTHONDONTWRITEBYTECODE=1
"$driverPython" -m kernel_builder check --python "$toolchainPython" "$tree"
echo "$variant: checks passed" > "$out"
