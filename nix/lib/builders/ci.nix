# `nix build .#ci`: every buildable variant of this system plus its kernel tests and its
# post-build checks, as one derivation of links (upstream's `ci` builds one variant per
# backend; here all that have a toolchain). It fails when any variant, check or test does.
#
# Type: { config; system; shell; members : [ { name; drv } ] } -> derivation
{ config, system, shell, members }:
derivation {
  name = "${config.name}-ci";
  inherit system;
  inherit (shell) builder PATH;
  args = [ "-c" ''
    set -eu
    mkdir -p "$out"
    set -- $memberPaths
    for name in $memberNames; do
      ln -s "$1" "$out/$name"
      shift
    done
  '' ];
  outputs = [ "out" ];
  memberNames = map (m: m.name) members;
  memberPaths = map (m: m.drv) members;
  preferLocalBuild = true;
}
