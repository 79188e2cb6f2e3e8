# A one-file program: `script` written to `$out/bin/<program>`, executable, by the toolchain's
# builder (no nixpkgs `writeScriptBin` here). Used by `ciTests.<variant>` (ci-test.nix) and
# `packages.<sys>.kernels` (kernels-cli.nix). Building it runs nothing of the script.
#
# Type: { name; program; system; toolchain; script : string } -> derivation
{ name, program, system, toolchain, script }:
derivation {
  inherit name system script;
  builder = toolchain.builder;
  PATH = toolchain.env.PATH;
  outputs = [ "out" ];
  args = [ "-c" ''
    set -eu
    mkdir -p "$out/bin"
    printf '%s' "$script" > "$out/bin/${program}"
    chmod 555 "$out/bin/${program}"
  '' ];
  preferLocalBuild = true;
}
