# Tiny test runner for the Nix library. Each test_<module>.nix mirrors one module of
# ../pure as { <export> = { <test> = { expr; expected; }; }; }, and test_lib.nix does the same
# for the library's own exports (../default.nix: what a kernel flake sees as
# `kernel-builder.lib`). A pure module that is one function (kernel-config.nix,
# kernel-identity.nix) exports the attributes of what it returns, read from `samples`.
#
# Meta-tests, so that a new export cannot go untested: every export has a test (`untested`),
# and every .nix file of ../pure is a module of ../pure/default.nix and every test file here
# is run (`unlisted`).
#
# Evaluates to { count; failures = [ { name; expr; expected; } ]; untested; unlisted; }.
# Run: nix eval --json --impure --expr 'import ./nix/lib/tests'
let
  inherit (builtins) attrNames concatMap elem filter isFunction map match pathExists readDir replaceStrings;

  pure = import ../pure;
  lib = import ../. { builderSrc = { outPath = toString ../../..; }; };

  # A sample argument for each pure module that is one function.
  samples = {
    kernelConfig = ../../../examples/relu;
    kernelIdentity = { self = null; path = ../../../examples/relu; recorded = null; };
  };
  exportsOf = name: module:
    if !isFunction module then attrNames module
    else if samples ? ${name} then attrNames (module samples.${name})
    else throw "nix/lib/tests: pure module ${name} is a function: give it a sample argument in `samples`";

  # kernelConfig -> kernel_config (module attribute -> test file name)
  upper = [ "A" "B" "C" "D" "E" "F" "G" "H" "I" "J" "K" "L" "M" "N" "O" "P" "Q" "R" "S" "T" "U" "V" "W" "X" "Y" "Z" ];
  lower = map (c: "_" + c) [ "a" "b" "c" "d" "e" "f" "g" "h" "i" "j" "k" "l" "m" "n" "o" "p" "q" "r" "s" "t" "u" "v" "w" "x" "y" "z" ];
  snake = replaceStrings upper lower;
  testFile = name: "test_${snake name}.nix";

  # { <suite> = { exports; tests; }; }: one suite per pure module, and "lib".
  suites = builtins.mapAttrs
    (name: module: {
      exports = exportsOf name module;
      tests = if pathExists (./. + "/${testFile name}") then import (./. + "/${testFile name}") else { };
    })
    pure
  // { lib = { exports = attrNames lib; tests = import ./test_lib.nix; }; };

  cases = concatMap
    (suite: concatMap
      (fn: map
        (test: suites.${suite}.tests.${fn}.${test} // { name = "${suite}.${fn}.${test}"; })
        (attrNames suites.${suite}.tests.${fn}))
      (attrNames suites.${suite}.tests))
    (attrNames suites);

  # meta-test: every export of every suite has at least one test
  untested = concatMap
    (suite: map (fn: "${suite}.${fn}") (filter (fn: !(suites.${suite}.tests ? ${fn})) suites.${suite}.exports))
    (attrNames suites);

  # meta-test: no pure file outside ../pure/default.nix, no test file that nothing runs
  nixFiles = dir: filter (f: match ".*\\.nix" f != null && f != "default.nix") (attrNames (readDir dir));
  pureFiles = map (f: replaceStrings [ "-" ] [ "_" ] f) (nixFiles ../pure);
  run = map testFile (attrNames pure) ++ [ "test_lib.nix" ];
  unlisted =
    map (f: "pure/${f} is not a module of pure/default.nix")
      (filter (f: !(elem "test_${f}" run)) pureFiles)
    ++ map (f: "tests/${f} is run by no suite") (filter (f: !(elem f run)) (nixFiles ./.));
in
{
  count = builtins.length cases;
  failures = map (c: { inherit (c) name expr expected; }) (filter (c: c.expr != c.expected) cases);
  inherit untested unlisted;
}
