# Which kernel files a backend's variants read: the rule `source.nix` filters with, as a
# pure function. python/kernel_builder/config/model.py (`Build.input_paths`) states the same
# rule; tests/variants/test_variants_nix.py compares the two on every example.
let
  inherit (builtins) any concatLists concatStringsSep elem elemAt filter genList length map match replaceStrings split
    stringLength substring;
in
rec {
  /* An include directory as a path under the kernel directory ("" for the directory itself).

     Type: relativeDir :: string -> string

     Example:
       relativeDir "./csrc/include"  => "csrc/include"
  */
  relativeDir = d: if d == "." || d == "./" then "" else replaceStrings [ "./" ] [ "" ] d;

  /* Whether a [kernel.NAME] table is a Rust component (edition 6 `language = "rust-..."`).

     Type: isRust :: attrset -> bool
  */
  isRust = k: match "rust-.*" (k.language or "") != null;

  /* The files and directories one backend's variants read.

     Type: inputPaths :: kernelConfig -> string -> { files : [string]; includeDirs : [string]; extDir : string; }

     Example:
       (inputPaths (import ./kernel-config.nix ./examples/relu) "cpu").files
       => [ "build.toml" "torch-ext/torch_binding.cpp" ... "relu_cpu/relu_cpu.cpp" ]
  */
  inputPaths =
    # from kernel-config.nix
    config:
    # a backend name such as "cuda"
    backend:
    let
      kernels = config.kernelsFor backend;
    in
    {
      # a Rust component's `cargo-manifest` too, after every `src` (as `Build.input_paths`)
      files = [ "build.toml" ] ++ (config.framework.src or [ ]) ++ concatLists (map (k: k.src or [ ]) kernels)
        ++ concatLists (map (k: if k ? cargo-manifest then [ k.cargo-manifest ] else [ ]) kernels);
      # include directories ([torch].include, this backend's [kernel.*].include) enter whole,
      # as does each `src` entry of a Rust component (cargo reads crate directories: src/, vendor/)
      includeDirs = filter (d: d != "")
        (map relativeDir ((config.framework.include or [ ]) ++ concatLists (map (k: k.include or [ ]) kernels)
          ++ concatLists (map (k: k.src or [ ]) (filter isRust kernels))));
      inherit (config) extDir;
    };

  /* Whether a path of the kernel directory enters one backend's source (`builders/source.nix`
     filters with this): the files of `inputPaths`, everything under its include directories,
     the directories above them, and the files under the extension directory whose extension
     is in `pyext`. `__pycache__` never, nor a `build` directory that holds no input.

     Type: keepSource :: kernelConfig -> string -> string -> string -> bool

     Example:
       map (rel: keepSource (import ./kernel-config.nix ./examples/relu) "cpu" rel "regular")
         [ "relu_cpu/relu_cpu.cpp" "relu_cuda/relu.cu" "torch-ext/relu/__init__.py" "NOTES.md" ]
       => [ true false true false ]
  */
  keepSource =
    # from kernel-config.nix
    config:
    # a backend name such as "cuda"
    backend:
    let
      inputs = inputPaths config backend;
      inherit (inputs) files includeDirs extDir;
      under = dir: rel: rel == dir || substring 0 (stringLength dir + 1) rel == dir + "/";
      # every directory above an explicit file must pass the filter too
      parentsOf = file:
        let
          parts = filter builtins.isString (split "/" file);
          prefix = i: concatStringsSep "/" (genList (j: elemAt parts j) i);
        in
        genList (i: prefix (i + 1)) (length parts - 1);
      dirs = concatLists (map parentsOf (files ++ map (d: d + "/x") includeDirs));
      extRegex = "(.*/)?[^/]*\\.(" + concatStringsSep "|" config.pyext + ")";
    in
    # the path relative to the kernel directory, such as "relu_cpu/relu_cpu.cpp"
    rel:
    # its type as builtins.path's filter gets it: "directory", "regular", ...
    type:
    let base = baseNameOf rel;
    in
    if base == "__pycache__" || base == "build" && !(elem rel dirs) then false
    else if any (d: under d rel) includeDirs then true
    else if type == "directory" then elem rel dirs || under extDir rel
    else elem rel files || (under extDir rel && match extRegex rel != null);
}
