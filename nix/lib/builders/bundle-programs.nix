# The bundle of a set of variants and the programs around it, all run with one shell: the
# first buildable variant's toolchain (store paths for the pinned provider).
#   bundleOf      [ { name; drv } ] -> the bundle (bundle.nix)
#   copyPrograms  bundle -> { build-variants; build-and-copy } (build-variants.nix, `nix run`)
#   uploadProgram { copy; count } -> build-and-upload (build-and-upload.nix, with the
#                 kernel-builder CLI package of ../../cli-package.nix)
#   ciOf          [ { name; drv } ] -> the `ci` derivation of links (ci.nix)
#
# Type: { builderSrc; provider; config; system; path; context; kernel; buildable }
#       -> { shell; bundleOf; copyPrograms; uploadProgram; ciOf }
{ builderSrc, provider, config, system, path, context, kernel, buildable }:
let
  # The shell the bundle and build-variants run with: the first buildable variant's
  # toolchain (store paths for the pinned provider).
  shell =
    if buildable == [ ] then { builder = "/bin/bash"; PATH = "/usr/bin:/bin"; driverPython = ""; }
    else let t = (builtins.head buildable).toolchain; in { inherit (t) builder driverPython; PATH = t.env.PATH; };
in
{
  inherit shell;
  bundleOf = variants: import ./bundle.nix { inherit config system path context kernel shell variants; };
  copyPrograms = bundle: {
    build-variants = import ./build-variants.nix { inherit config system bundle shell; };
    # upstream's names: build-and-copy (= build-variants) and build-and-upload
    build-and-copy = import ./build-variants.nix { inherit config system bundle shell; program = "build-and-copy"; };
  };
  uploadProgram = { copy, count }: import ./build-and-upload.nix {
    inherit config system shell copy count;
    cli = import ../../cli-package.nix { inherit builderSrc system provider; };
  };
  ciOf = members: import ./ci.nix { inherit config system shell members; };
}
