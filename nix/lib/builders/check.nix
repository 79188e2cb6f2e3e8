# The post-build checks of one variant as a derivation (`nix flake check` builds these):
# `kernel-builder check` on the variant tree (layout, metadata, digest, ABI report, and
# the import check with the variant's own toolchain Python).
#
# Type: { config; system; variant; drv; toolchain; pythonSrc; importCheck ? true } -> derivation
{ config, system, variant, drv, toolchain, pythonSrc, importCheck ? true }:
derivation (toolchain.env // {
  name = "${config.name}-${variant}-check";
  inherit system variant;
  builder = toolchain.builder;
  args = [ ./check-builder.sh ];
  outputs = [ "out" ];
  tree = drv;
  kernelBuilderPython = pythonSrc;
  inherit (toolchain) driverPython toolchainPython;
  SOURCE_DATE_EPOCH = "315532800"; # as variant.nix: no output depends on the day it was built
} // (if importCheck then { } else { noImport = "1"; }))
