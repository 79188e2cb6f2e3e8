# The kernel-test packages beside a torch environment (see testSite in parts.nix): pip
# installs the pinned wheels (offline, no dependency resolution) into $out/site-packages
# with that environment's Python, then their ELF files are patched like the environment's.
source "$libSh"
mkdir -p wheels "$out/site-packages"
for wheel in $wheels; do ln -s "$wheel" "wheels/${wheel#*-}"; done
export HOME="$PWD/home" PYTHONDONTWRITEBYTECODE=1 PIP_NO_CACHE_DIR=1 PIP_CONFIG_FILE=/dev/null
# One pip --target call per layer, each into its own directory, merged in order (pip
# --target skips a directory the target already has): later layers overwrite, as in a venv.
wheel_layers "$python" wheels/*.whl | while read -r layer; do
  rm -rf layer
  "$python" "$pip/pip" install --quiet --no-index --no-deps --no-compile \
    --disable-pip-version-check --no-warn-script-location --target layer $layer
  cp -a layer/. "$out/site-packages/"
done
find "$out" -name direct_url.json -exec rm -f {} +
patch_elf_tree "$out/site-packages"
[ -d "$out/site-packages/bin" ] && mv "$out/site-packages/bin" "$out/bin"
PYTHONPATH="$out/site-packages" "$python" -c 'import sys; print("test site:", sys.argv[1])' "$out"
