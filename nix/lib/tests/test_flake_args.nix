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
  };
}
