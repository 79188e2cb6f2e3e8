# Tiny test runner for the pure Nix library: each tests/test_<module>.nix mirrors a module as
# { <function> = { <test> = { expr; expected; }; }; }. A module that is one function
# (kernel-config.nix, kernel-identity.nix) is listed as { <name> = <function>; }. Evaluates to
# { count; failures = [ { name; expr; expected; } ]; untested = [ "module.function" ]; }.
# Run: nix eval --json --impure --expr 'import ./nix/lib/tests'
let
  modules = {
    versions = import ../versions.nix;
    names = import ../names.nix;
    matrix = import ../matrix.nix;
    inputs = import ../inputs.nix;
    kernelConfig = { kernelConfig = import ../kernel-config.nix; };
    kernelIdentity = { kernelIdentity = import ../kernel-identity.nix; };
  };
  suites = {
    versions = import ./test_versions.nix;
    names = import ./test_names.nix;
    matrix = import ./test_matrix.nix;
    inputs = import ./test_inputs.nix;
    kernelConfig = import ./test_kernel_config.nix;
    kernelIdentity = import ./test_kernel_identity.nix;
  };
  inherit (builtins) attrNames concatMap filter map;
  cases = concatMap
    (module: concatMap
      (fn: map
        (test: suites.${module}.${fn}.${test} // { name = "${module}.${fn}.${test}"; })
        (attrNames suites.${module}.${fn}))
      (attrNames suites.${module}))
    (attrNames suites);
  # meta-test: every function a module exports has at least one test
  untested = concatMap
    (module: map (fn: "${module}.${fn}")
      (filter (fn: !(suites.${module} ? ${fn})) (attrNames modules.${module})))
    (attrNames modules);
in
{
  count = builtins.length cases;
  failures = map (c: { inherit (c) name expr expected; }) (filter (c: c.expr != c.expected) cases);
  inherit untested;
}
