# The kernel source one backend's variants see, as a filtered store path.
#
# Only build.toml, the framework sources ([torch].src), the [kernel.*].src files of this
# backend, the include directories, and the files under torch-ext/ whose extension is in
# `pyext` enter (the rule is `inputs.nix`, shared with Build.input_paths); so editing
# a CUDA-only file changes only the CUDA variants' inputs, and build/, result links,
# tests and notes never cause a rebuild.
#
# Type: { pure; path; config; backend : string } -> store path
{ pure, path, config, backend }:
let
  root = toString path;
  inputs = pure.inputs.inputPaths config backend;
  inherit (inputs) files includeDirs;
  underInclude = rel: builtins.any
    (d: rel == d || builtins.substring 0 (builtins.stringLength d + 1) rel == d + "/")
    includeDirs;
  # Every directory above an explicit file must pass the filter too.
  parentsOf = file:
    let
      parts = builtins.filter builtins.isString (builtins.split "/" file);
      n = builtins.length parts;
      prefix = i: builtins.concatStringsSep "/" (builtins.genList (j: builtins.elemAt parts j) i);
    in
    builtins.genList (i: prefix (i + 1)) (n - 1);
  dirs = builtins.concatLists (map parentsOf (files ++ map (d: d + "/x") includeDirs));
  extRegex = "(.*/)?[^/]*\\.(" + builtins.concatStringsSep "|" config.pyext + ")";
  underExt = rel: rel == config.extDir || builtins.substring 0 (builtins.stringLength config.extDir + 1) rel == config.extDir + "/";
  keep = p: type:
    let
      rel = builtins.substring (builtins.stringLength root + 1) (-1) (toString p);
      base = baseNameOf p;
    in
    if base == "__pycache__" || base == "build" && !(builtins.elem rel dirs) then false
    else if underInclude rel then true
    else if type == "directory" then builtins.elem rel dirs || underExt rel
    else builtins.elem rel files || (underExt rel && builtins.match extRegex rel != null);
in
builtins.path {
  inherit path;
  name = "${config.name}-${backend}-source";
  filter = keep;
}
