# Writes $out/bin/kernel-builder (see cli-package.nix).
set -euo pipefail
mkdir -p "$out/bin"
{
  printf '#!%s\n' "$bash"
  printf 'export KERNEL_BUILDER_ROOT=%q\n' "$root"
  printf 'export PYTHONPATH=%q"${PYTHONPATH:+:$PYTHONPATH}"\n' "$root/python"
  printf 'exec %q -m kernel_builder "$@"\n' "$python"
} > "$out/bin/kernel-builder"
chmod +x "$out/bin/kernel-builder"
"$out/bin/kernel-builder" --version
