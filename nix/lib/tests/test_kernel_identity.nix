let
  identity = import ../kernel-identity.nix;
  clean = { rev = "0123456789abcdef"; shortRev = "0123456"; narHash = "sha256-x"; };
in
{
  kernelIdentity = {
    recorded = {
      expr = identity { self = clean; recorded = { unique-id = "abc1234_dirty"; commit = "abc"; dirty = true; }; };
      expected = { uniqueId = "abc1234_dirty"; commit = "abc"; dirty = true; };
    };
    cleanGit = { expr = identity { self = clean; recorded = null; }; expected = { uniqueId = "0123456"; commit = "0123456789abcdef"; dirty = false; }; };
    noRevision = {
      expr = (identity { self = { narHash = "sha256-x"; }; recorded = null; }).uniqueId;
      expected = "src" + builtins.substring 0 7 (builtins.hashString "sha256" "sha256-x");
    };
  };
}
