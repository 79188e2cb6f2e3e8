# `nix run .#build-variants`: realise the bundle, then copy each of its top-level entries
# into ./build/ of the directory it runs in, replacing only those entries.
#
# Type: { config; system; bundle } -> derivation with bin/build-variants
{ config, system, bundle }:
derivation {
  name = "build-variants";
  inherit system bundle;
  builder = "/bin/bash";
  args = [ ./build-variants-builder.sh ];
  outputs = [ "out" ];
  PATH = "/usr/bin:/bin";
  kernelName = config.name;
  preferLocalBuild = true;
  allowSubstitutes = false;
}
