# Builder of the bundle (see bundle.nix): copy each variant tree, benchmarks/ and the card.
set -euo pipefail
export HOME="$NIX_BUILD_TOP/home"
mkdir -p "$HOME" "$out"
for v in $variantOutputs; do
  cp -r "$v"/. "$out"/
done
if [ -d "$extras/benchmarks" ]; then
  cp -r "$extras/benchmarks" "$out/benchmarks"
fi
# The card as upload renders it: the kernel's CARD.md template, else the default template.
if [ -n "$driverPython" ] && [ -n "$variantNames" ]; then
  PYTHONPATH="$kernelBuilderPython" PYTHONDONTWRITEBYTECODE=1 \
    "$driverPython" "$renderCard" "$extras" "$out"
elif [ -f "$extras/CARD.md" ]; then
  cp "$extras/CARD.md" "$out/CARD.md"
fi
chmod -R u+w "$out"
