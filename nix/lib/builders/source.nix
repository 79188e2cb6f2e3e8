# The kernel source one backend's variants see, as a filtered store path.
#
# Only build.toml, the framework sources ([torch].src), the [kernel.*].src files of this
# backend, the include directories, and the files under torch-ext/ whose extension is in
# `pyext` enter (the rule is `pure.inputs.keepSource`, shared with Build.input_paths); so
# editing a CUDA-only file changes only the CUDA variants' inputs, and build/, result links,
# tests and notes never cause a rebuild.
#
# A kept file named `*.sec` (a signing key) stops the evaluation: the store is readable by
# every user, and nothing secret may enter it (`kernel-builder build` also recognises Nix and
# PEM secret keys by content, flake/kernel_source.py).
#
# Type: { pure; path; config; backend : string } -> store path
{ pure, path, config, backend }:
let
  root = toString path;
  keep = pure.inputs.keepSource config backend;
  refuseSecret = rel: type:
    if type == "regular" && builtins.match ".*\\.sec" rel != null then
      throw "kernel-builder: ${root}/build.toml: the ${backend} source would copy ${rel} into the Nix store, which every user of the machine can read, but it is a secret key; keep signing keys outside the kernel directory"
    else true;
in
builtins.path {
  inherit path;
  name = "${config.name}-${backend}-source";
  filter = p: type:
    let rel = builtins.substring (builtins.stringLength root + 1) (-1) (toString p);
    in keep rel type && refuseSecret rel type;
}
