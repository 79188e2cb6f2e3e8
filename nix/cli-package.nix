# The kernel-builder CLI as a Nix package: `nix run <builder>#kernel-builder -- build .`
# works without any pip install. A wrapper runs the package from this flake's source with
# the pinned `cli` Python environment (click, rich, attrs, huggingface_hub, ...), and points
# KERNEL_BUILDER_ROOT at the flake source, so `build` hands Nix this very builder.
# torch is not in it: the loader commands (info, download, ...) need a Python with torch.
#
# Type: { builderSrc; system } -> derivation with bin/kernel-builder
{ builderSrc, system }:
let
  parts = import ./toolchains/pinned/parts.nix { inherit system; };
in
derivation {
  name = "kernel-builder";
  inherit system;
  builder = "${parts.runtime}/bin/bash";
  args = [ "-e" ./cli-package-builder.sh ];
  outputs = [ "out" ];
  PATH = "${parts.runtime}/bin";
  bash = "${parts.runtime}/bin/bash";
  python = "${parts.cli}/bin/python";
  root = builderSrc.outPath;
}
