let
  identity = import ../pure/kernel-identity.nix;
  clean = { rev = "0123456789abcdef"; shortRev = "0123456"; narHash = "sha256-x"; };
  recorded = { unique-id = "abc1234_dirty"; commit = "abc"; dirty = true; };
  noRevision = identity { self = { narHash = "sha256-x"; }; recorded = null; };
in
{
  uniqueId = {
    recorded = { expr = (identity { self = clean; inherit recorded; }).uniqueId; expected = "abc1234_dirty"; };
    cleanGit = { expr = (identity { self = clean; recorded = null; }).uniqueId; expected = "0123456"; };
    dashesBecomeUnderscores = { expr = (identity { self = clean // { shortRev = "01-23"; }; recorded = null; }).uniqueId; expected = "01_23"; };
    noRevision = { expr = noRevision.uniqueId; expected = "src" + builtins.substring 0 7 (builtins.hashString "sha256" "sha256-x"); };
    noSelf = {
      expr = (identity { self = null; recorded = null; }).uniqueId;
      expected = "src" + builtins.substring 0 7 (builtins.hashString "sha256" "sha256-unknown");
    };
  };
  commit = {
    recorded = { expr = (identity { self = clean; inherit recorded; }).commit; expected = "abc"; };
    recordedWithout = { expr = (identity { self = clean; recorded = { unique-id = "x"; }; }).commit; expected = null; };
    cleanGit = { expr = (identity { self = clean; recorded = null; }).commit; expected = "0123456789abcdef"; };
    noRevision = { expr = noRevision.commit; expected = null; };
  };
  dirty = {
    recorded = { expr = (identity { self = clean; inherit recorded; }).dirty; expected = true; };
    recordedDefault = { expr = (identity { self = clean; recorded = { unique-id = "x"; }; }).dirty; expected = false; };
    cleanGit = { expr = (identity { self = clean; recorded = null; }).dirty; expected = false; };
  };
}
