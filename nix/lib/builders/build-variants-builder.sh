# Writes $out/bin/$program (build-variants or build-and-copy), a script bound to one
# bundle store path.
set -euo pipefail
mkdir -p "$out/bin"
script="$out/bin/${program:-build-variants}"
{
  printf '#!%s\n' "$BASH"
  echo 'set -euo pipefail'
  printf 'export PATH=%q:"$PATH"\n' "$toolsPath"
  printf 'bundle=%q\n' "$bundle"
  printf 'kernel=%q\n' "$kernelName"
  printf 'program=%q\n' "${program:-build-variants}"
  cat <<'BODY'
mkdir -p build
count=0
for entry in "$bundle"/*; do
  name=$(basename "$entry")
  rm -rf "build/$name"
  cp -r "$entry" "build/$name"
  chmod -R u+w "build/$name"
  if [ -d "$entry" ] && [ "$name" != benchmarks ]; then
    count=$((count + 1))
  fi
done
echo "$program: copied $count variant(s) of $kernel into ./build" >&2
BODY
} > "$script"
chmod +x "$script"
