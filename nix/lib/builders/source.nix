# The kernel source one backend's variants see, as a filtered store path.
#
# Only build.toml, the framework sources ([torch].src), the [kernel.*].src files of this
# backend, the include directories, and the files under torch-ext/ whose extension is in
# `pyext` enter (the rule is `pure.inputs.keepSource`, shared with Build.input_paths); so
# editing a CUDA-only file changes only the CUDA variants' inputs, and build/, result links,
# tests and notes never cause a rebuild.
#
# Type: { pure; path; config; backend : string } -> store path
{ pure, path, config, backend }:
let
  root = toString path;
  keep = pure.inputs.keepSource config backend;
in
builtins.path {
  inherit path;
  name = "${config.name}-${backend}-source";
  filter = p: type: keep (builtins.substring (builtins.stringLength root + 1) (-1) (toString p)) type;
}
