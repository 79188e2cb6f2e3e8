# What a provider returns for a build set it cannot serve: the reason, and no toolchain.
#
# Type: string -> toolchain (see default.nix)
reason: {
  available = false;
  inherit reason;
  builder = null;
  driverPython = null;
  toolchainPython = null;
  env = { };
  identity = { };
}
