# Builder of one variant derivation (bash; see variant.nix). Nix starts builders with
# PATH=/path-not-set and HOME=/homeless-shelter: PATH comes from the derivation, HOME is
# made here so that tools that write caches (torch, cmake, pip) have somewhere to go.
set -euo pipefail
# ninja runs every command through /bin/sh. Nix puts one in the sandbox only when it was
# built with a sandbox shell (Debian's nix-bin is not); then the builder owns the sandbox
# root and provides one itself: the toolchain's own bash, a store path like every input.
if [ ! -e /bin/sh ] && [ -n "${sandboxShell:-}" ]; then
  mkdir -p /bin && ln -s "$sandboxShell" /bin/sh
fi
export HOME="$NIX_BUILD_TOP/home"
mkdir -p "$HOME"
export PYTHONPATH="$kernelBuilderPython"
export PYTHONDONTWRITEBYTECODE=1
export PYTHONNOUSERSITE=1
# Empty stand-ins for the other backends' sources (see placeholdersFor in kernel-config.nix).
source_dir="$src"
if [ -n "${placeholders:-}" ]; then
  source_dir="$NIX_BUILD_TOP/source"
  cp -r "$src" "$source_dir"
  chmod -R u+w "$source_dir"
  for file in $placeholders; do
    if [ ! -e "$source_dir/$file" ]; then
      mkdir -p "$(dirname "$source_dir/$file")"
      : > "$source_dir/$file"
    fi
  done
fi
args=(-m kernel_builder.driver.run_variant
  --source "$source_dir"
  --variant "$variant"
  --out "$out"
  --toolchain-python "$toolchainPython"
  --unique-id "$uniqueId")
if [ -n "${kernelCommit:-}" ]; then
  args+=(--kernel-commit "$kernelCommit")
  if [ "${kernelDirty:-}" = 1 ]; then
    args+=(--kernel-dirty)
  fi
fi
if [ -n "${prebuiltModule:-}" ]; then
  args+=(--prebuilt-module "$prebuiltModule")  # the link output of the per-object build (per-object.nix)
fi
if [ "${noImportCheck:-}" = 1 ]; then
  args+=(--no-import-check)  # doGetKernelCheck = false in the kernel's flake.nix
fi
case "${toolchainProvider:-host}" in
  host) echo "kernel-builder: building $variant with $toolchainPython (host toolchain, not hermetic)" ;;
  *) echo "kernel-builder: building $variant with the $toolchainProvider toolchain ($toolchainPython)" ;;
esac
exec "$driverPython" "${args[@]}"
