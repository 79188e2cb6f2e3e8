# `nix run .#build-and-upload`: realise the bundle, copy it into ./build/ (as
# build-and-copy does), then publish ./build with the kernel-builder CLI package:
# `kernel-builder upload . --repo-id <[general.hub] repo-id> [--branch <[general.hub] branch>]`,
# the same as `kernel-builder build` + `kernel-builder upload`. Like upstream's, a missing
# repo-id is an evaluation error, and with no variant to upload the script does nothing.
#
# Type: { config; system; copy : build-and-copy drv; cli : kernel-builder package drv; shell; count : int }
#       -> derivation with bin/build-and-upload
{ config, system, copy, cli, shell, count }:
let
  hub = config.toml.general.hub or { };
  repoId = hub.repo-id or (throw "kernel-builder: build-and-upload: build.toml's [general.hub] has no repo-id; add one (or use `kernel-builder build-and-upload --repo-id ORG/NAME`)");
in
derivation {
  name = "build-and-upload";
  inherit system;
  inherit (shell) builder PATH;
  args = [ ./build-and-upload-builder.sh ];
  outputs = [ "out" ];
  copyScript = "${copy}/bin/build-and-copy";
  kernelBuilder = "${cli}/bin/kernel-builder";
  inherit repoId;
  branch = hub.branch or "";
  variantCount = toString count;
  preferLocalBuild = true;
  allowSubstitutes = false;
}
