# One variant as one raw derivation that runs the one-variant build.
#
# Its inputs are only: this backend's filtered source, the build-relevant part of the
# kernel-builder Python package, the kernel identity, and the toolchain (its store paths
# for the pinned provider, its recorded identity for the host one). The builder is the
# toolchain's bash (the pinned one's is a store path) with outputs = [ "out" ], so that
# `nix develop` works on it.
#
# Type: { config; variant : string; backend; system; src; pythonSrc; toolchain; kernel }
#       -> derivation whose $out/<variant>/ is the variant tree
{ config, variant, backend, system, src, pythonSrc, toolchain, kernel, extraAttrs ? { } }:
if !toolchain.available then
  throw "kernel-builder: cannot build variant ${variant} of ${config.name} on this machine: ${toolchain.reason}"
else
derivation (toolchain.identity // toolchain.env // {
  name = "${config.name}-${variant}";
  inherit system variant backend src;
  builder = toolchain.builder;
  args = [ ./variant-builder.sh ];
  outputs = [ "out" ];
  kernelBuilderPython = pythonSrc;
  inherit (toolchain) driverPython toolchainPython;
  toolchainProvider = toolchain.identity.toolchainProvider;
  uniqueId = kernel.uniqueId;
  kernelCommit = if kernel.commit == null then "" else kernel.commit;
  kernelDirty = if kernel.dirty then "1" else "";
  placeholders = config.placeholdersFor backend;
  # __DATE__/__TIME__, archive and zip timestamps: the same inputs give the same bytes on
  # every machine and every day (`nix build --rebuild` checks it).
  SOURCE_DATE_EPOCH = "315532800"; # 1980-01-01T00:00:00Z, the earliest time a zip can hold
}
  # A cross toolchain's emulated Python (pinned.nix): the import check runs under it.
  // (if (toolchain.emulatedPython or null) != null && (extraAttrs.noImportCheck or "") != "1"
      then { KERNEL_BUILDER_TARGET_PYTHON = toolchain.emulatedPython; } else { })
  // extraAttrs)
