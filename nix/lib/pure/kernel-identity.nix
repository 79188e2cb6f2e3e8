# The kernel's identity: the unique id in the ops namespace and the provenance commit.
#
# The rule is python/kernel_builder/identity.py's: in git the short commit, plus "_dirty"
# when tracked files differ from it; outside git the first 7 hex digits of the sha256 of
# build.toml. `kernel-builder build` computes it and records it, because Nix 2.8 gives a
# dirty tree no revision at all. Without a record the rule is applied to what Nix sees: a
# clean git tree -> shortRev; anything else -> the build.toml hash (so a dirty tree loses
# its "_dirty" id: use `kernel-builder build`). tests/nix/test_nix_eval.py checks that both
# sides agree.
#
# Type: { self; path; recorded : { unique-id; commit; dirty } | null } -> { uniqueId; commit; dirty }
{ self, path, recorded }:
let
  clean = self != null && self ? rev;
in
if recorded != null then {
  uniqueId = recorded.unique-id;
  commit = recorded.commit or null;
  dirty = recorded.dirty or false;
}
else if clean then {
  uniqueId = builtins.replaceStrings [ "-" ] [ "_" ] self.shortRev;
  commit = self.rev;
  dirty = false;
}
else {
  uniqueId = builtins.substring 0 7 (builtins.hashFile "sha256" (path + "/build.toml"));
  commit = null;
  dirty = false;
}
