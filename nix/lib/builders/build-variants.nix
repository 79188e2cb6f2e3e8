# `nix run .#build-variants`: realise the bundle, then copy each of its top-level entries
# into ./build/ of the directory it runs in, replacing only those entries.
#
# Type: { config; system; bundle; shell : { builder; PATH } } -> derivation with bin/build-variants
{ config, system, bundle, shell }:
derivation {
  name = "build-variants";
  inherit system bundle;
  inherit (shell) builder PATH;
  toolsPath = shell.PATH;
  args = [ ./build-variants-builder.sh ];
  outputs = [ "out" ];
  kernelName = config.name;
  preferLocalBuild = true;
  allowSubstitutes = false;
}
