let
  a = import ../pure/flake-args.nix;
  fails = e: !(builtins.tryEval e).success;
in
{
  accepted = {
    upstreamsAndOurs = {
      expr = a.accepted;
      expected = [ "self" "path" "rev" "torchVersions" "pythonCheckInputs" "pythonNativeCheckInputs" "doGetKernelCheck" "system" "toolchainProvider" ];
    };
  };
  unknown = {
    namesTheTypo = { expr = a.unknown { path = ./.; torchVersion = _: [ ]; self = null; }; expected = [ "torchVersion" ]; };
    noneForUpstreamArgs = { expr = a.unknown { path = ./.; self = null; doGetKernelCheck = false; pythonCheckInputs = _: [ ]; }; expected = [ ]; };
  };
  check = {
    passesKnown = { expr = a.check { path = "p"; }; expected = { path = "p"; }; };
    refusesUnknown = { expr = fails (a.check { path = "p"; pythonCheckInput = _: [ ]; }); expected = true; };
    refusesANonFunction = { expr = fails (a.check { path = "p"; torchVersions = [ ]; }); expected = true; };
    passesABooleanCheckAndAKnownSystem = {
      expr = a.check { path = "p"; doGetKernelCheck = false; system = "aarch64-linux"; };
      expected = { path = "p"; doGetKernelCheck = false; system = "aarch64-linux"; };
    };
  };
  systems = {
    ofTheBuildSets = { expr = a.systems; expected = [ "aarch64-darwin" "aarch64-linux" "x86_64-linux" ]; };
  };
  examples = {
    oneForEachFunctionArgument = {
      expr = builtins.attrNames a.examples;
      expected = [ "pythonCheckInputs" "pythonNativeCheckInputs" "torchVersions" ];
    };
  };
  problem = {
    noneForGoodArguments = { expr = a.problem { path = "p"; torchVersions = all: all; }; expected = null; };
    torchVersionsGetsItsOwnExample = {
      expr = a.problem { torchVersions = 5; };
      expected = "torchVersions must be a function, got an integer (5); e.g. ${a.examples.torchVersions}";
    };
    checkInputsGetTheirExample = {
      expr = a.problem { pythonNativeCheckInputs = [ ]; };
      expected = "pythonNativeCheckInputs must be a function, got a list; e.g. ${a.examples.pythonNativeCheckInputs}";
    };
    doGetKernelCheckIsABoolean = {
      expr = a.problem { doGetKernelCheck = "false"; };
      expected = "doGetKernelCheck must be true or false, got a string (\"false\")";
    };
    systemIsOneOfTheBuildSets = {
      expr = a.problem { system = "riscv64-linux"; };
      expected = "system = \"riscv64-linux\" is not a system kernel-builder builds for; one of: aarch64-darwin, aarch64-linux, x86_64-linux";
    };
    systemIsAString = {
      expr = a.problem { system = 1; };
      expected = "system must be a string, got an integer; one of: aarch64-darwin, aarch64-linux, x86_64-linux";
    };
  };
}
