# `packages.<sys>.kernels` (upstream's name): the `kernels` command of the loader package
# (`nix run .#kernels -- --help`), run by a variant's toolchain Python with the pinned
# kernel-test site that holds the loader (the one the kernel's tests see).
#
# Type: { system; toolchain; site : drv | null } -> derivation ($out/bin/kernels)
{ system, toolchain, site }:
let
  q = s: "'" + builtins.replaceStrings [ "'" ] [ "'\\''" ] (toString s) + "'";
  # the console script the installed distribution declares, whatever module it lives in
  main = "import sys; from importlib.metadata import entry_points; (ep,) = entry_points(group='console_scripts', name='kernels'); sys.argv[0] = 'kernels'; sys.exit(ep.load()())";
  script = ''
    #!${toolchain.builder}
    ${if site == null then "" else "export PYTHONPATH=${q "${site}/site-packages"}\"\${PYTHONPATH:+:$PYTHONPATH}\""}
    exec ${q toolchain.toolchainPython} -c ${q main} "$@"
  '';
in
# named `kernels`, so that `nix run` finds bin/kernels under any Nix (meta.mainProgram too)
(import ./script-program.nix { name = "kernels"; program = "kernels"; inherit system toolchain script; })
// { meta.mainProgram = "kernels"; }
