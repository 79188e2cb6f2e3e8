# Writes $out/bin/build-and-upload (see build-and-upload.nix).
set -euo pipefail
mkdir -p "$out/bin"
script="$out/bin/build-and-upload"
{
  printf '#!%s\n' "$BASH"
  echo 'set -euo pipefail'
  if [ "$variantCount" = 0 ]; then
    echo 'echo "build-and-upload: no variant of this kernel is built here; nothing to upload" >&2'
  else
    printf '%q\n' "$copyScript"
    branch_args=""
    if [ -n "$branch" ]; then
      branch_args=$(printf -- '--branch %q' "$branch")
    fi
    printf '%q upload . --repo-id %q %s "$@"\n' "$kernelBuilder" "$repoId" "$branch_args"
  fi
} > "$script"
chmod +x "$script"
