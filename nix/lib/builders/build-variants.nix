# `nix run .#build-variants`: realise the bundle, then copy each of its top-level entries
# into ./build/ of the directory it runs in, replacing only those entries.
#
# `program` names the script: build-variants, or build-and-copy (upstream's name for the
# same thing).
#
# Type: { config; system; bundle; shell : { builder; PATH }; program ? "build-variants" } -> derivation with bin/<program>
{ config, system, bundle, shell, program ? "build-variants" }:
derivation {
  name = program;
  inherit program;
  inherit system bundle;
  inherit (shell) builder PATH;
  toolsPath = shell.PATH;
  args = [ ./build-variants-builder.sh ];
  outputs = [ "out" ];
  kernelName = config.name;
  preferLocalBuild = true;
  allowSubstitutes = false;
}
