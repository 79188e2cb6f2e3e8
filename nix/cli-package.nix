# The kernel-builder CLI as a Nix package: `nix run <builder>#kernel-builder -- build .`
# works without any pip install. A wrapper runs the package from this flake's source with
# the pinned `cli` Python environment (click, rich, attrs, huggingface_hub, ...), and points
# KERNEL_BUILDER_ROOT at the flake source, so `build` hands Nix this very builder.
# torch is not in it: the loader commands (info, download, ...) need a Python with torch.
#
# The shell and the Python are the toolchain provider's answer (`cli`, the lock's pinned
# ones for every provider; see nix/toolchains/default.nix).
#
# Type: { builderSrc; system; provider ? system's pinned provider } -> derivation with bin/kernel-builder
{ builderSrc, system, provider ? (import ./toolchains).pinned { inherit system; } }:
let
  inherit (provider) cli;
in
derivation {
  name = "kernel-builder";
  inherit system;
  builder = cli.shell;
  args = [ "-e" ./cli-package-builder.sh ];
  outputs = [ "out" ];
  inherit (cli) PATH python;
  bash = cli.shell;
  root = builderSrc.outPath;
}
