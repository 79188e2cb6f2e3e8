let
  identity = import ../pure/kernel-identity.nix;
  relu = ../../../examples/relu;
  clean = { rev = "0123456789abcdef"; shortRev = "0123456"; narHash = "sha256-x"; };
  recorded = { unique-id = "abc1234_dirty"; commit = "abc"; dirty = true; };
  # what Nix gives a dirty git tree or a path: flake: no revision
  noRevision = identity { self = { narHash = "sha256-x"; }; path = relu; recorded = null; };
  buildTomlHash = builtins.substring 0 7 (builtins.hashFile "sha256" (relu + "/build.toml"));
in
{
  uniqueId = {
    recorded = { expr = (identity { self = clean; path = relu; inherit recorded; }).uniqueId; expected = "abc1234_dirty"; };
    cleanGit = { expr = (identity { self = clean; path = relu; recorded = null; }).uniqueId; expected = "0123456"; };
    dashesBecomeUnderscores = { expr = (identity { self = clean // { shortRev = "01-23"; }; path = relu; recorded = null; }).uniqueId; expected = "01_23"; };
    noRevisionIsTheBuildTomlHash = { expr = noRevision.uniqueId; expected = buildTomlHash; };
    noSelf = { expr = (identity { self = null; path = relu; recorded = null; }).uniqueId; expected = buildTomlHash; };
    recordedNeedsNoPath = { expr = (identity { self = null; path = throw "unused"; inherit recorded; }).uniqueId; expected = "abc1234_dirty"; };
  };
  commit = {
    recorded = { expr = (identity { self = clean; path = relu; inherit recorded; }).commit; expected = "abc"; };
    recordedWithout = { expr = (identity { self = clean; path = relu; recorded = { unique-id = "x"; }; }).commit; expected = null; };
    cleanGit = { expr = (identity { self = clean; path = relu; recorded = null; }).commit; expected = "0123456789abcdef"; };
    noRevision = { expr = noRevision.commit; expected = null; };
  };
  dirty = {
    recorded = { expr = (identity { self = clean; path = relu; inherit recorded; }).dirty; expected = true; };
    recordedDefault = { expr = (identity { self = clean; path = relu; recorded = { unique-id = "x"; }; }).dirty; expected = false; };
    cleanGit = { expr = (identity { self = clean; path = relu; recorded = null; }).dirty; expected = false; };
  };
}
