# A Python environment (a venv over the store Python) with pinned wheels installed by pip
# (from its own wheel, offline, no dependency resolution), then patched so that its ELF
# files find the runtime libraries and the store ld.so.
source "$libSh"
mkdir -p "$out/bin" wheels
ln -s "$python/usr/bin/python3.11" "$out/bin/python"
ln -s python "$out/bin/python3"
ln -s python "$out/bin/python3.11"
printf 'home = %s\ninclude-system-site-packages = false\nversion = 3.11\n' "$python/usr/bin" > "$out/pyvenv.cfg"
# pip needs each wheel under its own file name (store paths carry a hash prefix).
for wheel in $wheels; do ln -s "$wheel" "wheels/${wheel#*-}"; done
export HOME="$PWD/home" PYTHONDONTWRITEBYTECODE=1 PIP_NO_CACHE_DIR=1 PIP_CONFIG_FILE=/dev/null
wheel_layers "$out/bin/python" wheels/*.whl | while read -r layer; do
  "$out/bin/python" "$pip/pip" install --quiet --no-index --no-deps --no-compile \
    --disable-pip-version-check --no-warn-script-location $layer
done
sp="$out/lib/python3.11/site-packages"
# direct_url.json names the wheel's store path: provenance only, and a needless reference.
find "$sp" -name direct_url.json -exec rm -f {} +
# Bytecode, compiled once here: the store is read-only, so without it every interpreter
# compiles each module it imports again (torch's import takes 3.6 s instead of 1.9 s, in
# every import check). unchecked-hash .pyc files are used as they are, whatever the store's
# timestamps. A file that does not compile (a template, a test for another Python) is
# compiled, or fails, when imported, as it would without this.
"$out/bin/python" -m compileall -q -j 0 --invalidation-mode unchecked-hash "$sp" >/dev/null || true
patch_elf_tree "$sp"
patch_elf_tree "$out/bin"
# Point the CUDA toolkit from wheels (nvidia/cu13) at the host compiler wrappers.
"$out/bin/python" -c 'import sys; print("env:", sys.prefix, len(sys.path))'
