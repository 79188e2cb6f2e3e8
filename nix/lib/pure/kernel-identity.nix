# The kernel's identity: the unique id in the ops namespace and the provenance commit.
#
# `kernel-builder build` computes it (builder.md §4: clean git -> short commit, dirty ->
# short commit + "_dirty"; outside git a hash of build.toml) and records it, because Nix 2.8 gives a dirty tree no revision at
# all. Without a record: clean git -> shortRev; otherwise a prefix of the source hash
# (every edit then changes the id, so everything rebuilds: use `kernel-builder build`).
#
# Type: { self; recorded : { unique-id; commit; dirty } | null } -> { uniqueId; commit; dirty }
{ self, recorded }:
let
  clean = self != null && self ? rev;
  narHash = if self != null && self ? narHash then self.narHash else "sha256-unknown";
  hashPrefix = builtins.substring 0 7 (builtins.hashString "sha256" narHash);
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
  uniqueId = "src${hashPrefix}";
  commit = null;
  dirty = false;
}
