# The locked `kernel-depends` trees of a kernel (kernels.lock, see docs/kernel-deps.md) as
# fixed-output paths, and what a variant's import check reads to resolve them.
#
# `kernel-builder build` downloads each tree on the host, checks its hash against the lock,
# adds it to the store (`nix-store --add-fixed --recursive sha256`) and lists it in
# state/kernel-deps.json ({ repo-id; name; hash }). The derivations below name the same
# (name, hash), so their output is that valid path and nothing is built or downloaded
# inside a build. Without the front end (a plain `nix build` on a fresh store) the path is
# missing and the build stops with the fix.
#
# Type: { system; deps : [ { repo-id; name; hash } ] } -> { attrs : variant record -> attrs; localKernels : string }
{ system, deps }:
let
  fetched = map (d: {
    repo-id = d."repo-id";
    path = derivation {
      inherit system;
      inherit (d) name;
      builder = "/bin/sh";
      args = [ "-c" "echo 'kernel-builder: kernel dependency ${d."repo-id"} is not in the Nix store: run kernel-builder build (it fetches the locked kernel-depends), or kernel-builder lock-kernel-deps if kernels.lock changed' >&2; exit 1" ];
      outputHashMode = "recursive";
      outputHashAlgo = "sha256";
      outputHash = d.hash;
    };
  }) deps;
in
{
  # LOCAL_KERNELS entries (repo=path, colon-separated) for the kernel-test runs and shells:
  # PyPI kernels' get_kernel (and kernel-builder's loader) resolve the dependencies there.
  localKernels = builtins.concatStringsSep ":" (map (k: "${k.repo-id}=${k.path}") fetched);
  attrs = v:
    if deps == [ ] then { }
    else {
      # Read by the import check (tree/checks.py): the first of `variants` each dependency
      # has under build/ is imported and handed to the kernel's get_kernel_dep.
      KERNEL_BUILDER_KERNEL_DEPS = builtins.toJSON {
        variants = [ v.name "torch-${v.backend}" "torch-universal" ];
        kernels = map (k: { inherit (k) repo-id; path = "${k.path}"; }) fetched;
      };
    };
}
