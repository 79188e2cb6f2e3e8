# Builder of the per-object build's derivations (bash; see per-object.nix): the plan, the
# deps (what each unit reads), one object per translation unit, and the link. The driver's Python does the work
# (kernel_builder.driver.plan and .units); this sets up what variant-builder.sh sets up.
set -euo pipefail
# ninja, nvcc and the link run commands through /bin/sh (see variant-builder.sh).
if [ ! -e /bin/sh ] && [ -n "${sandboxShell:-}" ]; then
  mkdir -p /bin && ln -s "$sandboxShell" /bin/sh
fi
export HOME="$NIX_BUILD_TOP/home"
mkdir -p "$HOME"
export PYTHONPATH="$kernelBuilderPython"
export PYTHONDONTWRITEBYTECODE=1
export PYTHONNOUSERSITE=1
case "$step" in
  plan)
    # build.toml and empty files with the sources' names: a plan does not read sources.
    source_dir="$NIX_BUILD_TOP/source"
    mkdir -p "$source_dir"
    cp "$buildToml" "$source_dir/build.toml"
    for file in $sourceNames; do
      mkdir -p "$(dirname "$source_dir/$file")"
      : > "$source_dir/$file"
    done
    exec "$driverPython" -m kernel_builder.driver.plan --source "$source_dir" --variant "$variant" \
      --out "$out" --toolchain-python "$toolchainPython" --unique-id "$uniqueId"
    ;;
  deps)
    aliases=()
    [ -z "${cudaAlias:-}" ] || aliases=(--alias "$cudaAlias")
    exec "$driverPython" -m kernel_builder.driver.units deps --plan "$plan" --sources "$sources" \
      --unit "$unit" --unit-file "$unitFile" --out "$out" "${aliases[@]}"
    ;;
  merge)
    # shellcheck disable=SC2086  # one store path per unit, none with spaces
    exec "$driverPython" -m kernel_builder.driver.units merge --parts $parts --out "$out"
    ;;
  object)
    if [ -n "${unitJsonPath:-}" ]; then  # a measured unit (deps.json): what it reads, nothing else
      files=()
      [ -z "${unitFiles:-}" ] || files=(--files "$unitFiles")
      exec "$driverPython" -m kernel_builder.driver.units object --unit "$unitJsonPath" "${files[@]}" \
        --label "$label" --out "$out"
    fi
    exec "$driverPython" -m kernel_builder.driver.units object --plan "$plan" --source "$unit" \
      --file "$unitFile" --headers "$headers" --unique-id "$uniqueId" --out "$out"
    ;;
  link)
    # shellcheck disable=SC2086  # one store path per object, none with spaces
    exec "$driverPython" -m kernel_builder.driver.units link --plan "$plan" --objects $objects \
      --unique-id "$uniqueId" --out "$out"
    ;;
  *)
    echo "units-builder.sh: unknown step '${step:-}'" >&2
    exit 2
    ;;
esac
