# What the import check of one backend's variants can import besides the toolchain's own
# environment: the `kernels` loader's runtime dependencies (every variant: a kernel may
# import what its loader always brings) and the kernel's python-depends ([general] and
# [general.<backend>]), each pinned as wheels (requests.python.importCheck of
# nix/toolchain-lock.json). Handed to the variant build as KERNEL_BUILDER_IMPORT_PATH; a
# python-depends name the lock does not pin makes those variants unbuildable, with the reason.
#
# The pinned sets are the toolchain provider's answer (`importCheckPaths`, see
# nix/toolchains/default.nix).
#
# Type: { provider } -> config -> backend -> { reason : string | null; attrs : attrs }
{ provider }:
let
  paths = provider.importCheckPaths;
in
config: backend:
let
  general = config.toml.general or { };
  names = (general.python-depends or [ ]) ++ ((general.${backend} or { }).python-depends or [ ]);
  missing = builtins.filter (n: !(paths ? ${n})) names;
  chosen = (if paths ? loader then [ paths.loader ] else [ ]) ++ map (n: paths.${n}) (builtins.filter (n: paths ? ${n}) names);
in
{
  reason =
    if missing == [ ] then null
    else "build.toml python-depends ${builtins.concatStringsSep ", " missing}: not pinned for the import check "
      + "(requests.python.importCheck of the toolchain lock pins: ${builtins.concatStringsSep ", " (builtins.filter (n: n != "loader") (builtins.attrNames paths))})";
  attrs = if chosen == [ ] then { } else { KERNEL_BUILDER_IMPORT_PATH = builtins.concatStringsSep ":" chosen; };
}
