# build.toml, read with builtins.fromTOML, and the facts the derivations need.
#
# Type: path -> { toml; name; pythonName; backends; kernelBackends; kernelsFor; pyext; hubRepoId; }
# Example: (import ./kernel-config.nix ./examples/relu).kernelBackends  => [ "cpu" "cuda" ]
path:
let
  inherit (import ./languages.nix) backendOf;
  file = path + "/build.toml";
  toml =
    if builtins.pathExists file then builtins.fromTOML (builtins.readFile file)
    else throw "kernel-builder: no build.toml in ${toString path}; a kernel flake must call genKernelFlakeOutputs with `path = ./.;` from the directory holding build.toml";
  general = toml.general or (throw "kernel-builder: build.toml has no [general] table");
  name = general.name or (throw "kernel-builder: build.toml: [general] name is missing");
  backends = general.backends
    or (throw "kernel-builder: build.toml: [general] backends is missing; run `kernel-builder update-build` to convert an older build.toml to edition 5");
  kernels = toml.kernel or { };
  kernelsFor = backend:
    builtins.filter (k: backendOf k == backend) (builtins.attrValues kernels);
  upper = [ "A" "B" "C" "D" "E" "F" "G" "H" "I" "J" "K" "L" "M" "N" "O" "P" "Q" "R" "S" "T" "U" "V" "W" "X" "Y" "Z" ];
  lower = [ "a" "b" "c" "d" "e" "f" "g" "h" "i" "j" "k" "l" "m" "n" "o" "p" "q" "r" "s" "t" "u" "v" "w" "x" "y" "z" ];
  toLower = builtins.replaceStrings upper lower;
  framework =
    if toml ? torch then toml.torch
    else if toml ? torch-noarch then toml.torch-noarch
    else if toml ? tvm-ffi then toml.tvm-ffi
    else if toml ? mlx-noarch then toml.mlx-noarch
    else { };
in
{
  inherit toml name backends kernelsFor framework;
  # The Python module name: lower case, dashes become underscores.
  pythonName = builtins.replaceStrings [ "-" ] [ "_" ] (toLower name);
  # Backends with at least one compiled [kernel.*] component (the others are noarch).
  kernelBackends = builtins.filter (b: kernelsFor b != [ ]) backends;
  pyext = framework.pyext or [ "py" "pyi" ];
  # The [kernel.*].src files of the other backends: the one-variant build expects every
  # listed file to exist, so a variant gets empty stand-ins for them (their contents are
  # not its inputs: editing a CUDA file must not rebuild the CPU variants).
  placeholdersFor = backend:
    let
      mine = (framework.src or [ ]) ++ builtins.concatLists (map (k: k.src or [ ]) (kernelsFor backend));
      others = builtins.concatLists (map (k: k.src or [ ])
        (builtins.filter (k: backendOf k != backend) (builtins.attrValues kernels)));
    in
    builtins.filter (f: !(builtins.elem f mine)) others;
  hubRepoId = (general.hub or { }).repo-id or null;
  extDir = if toml ? tvm-ffi then "tvm-ffi-ext" else "torch-ext";
}
