# Which kernel files a backend's variants read: the rule `source.nix` filters with, as a
# pure function. python/kernel_builder/config/model.py (`Build.input_paths`) states the same
# rule; tests/variants/test_variants_nix.py compares the two on every example.
let
  inherit (builtins) concatLists filter map replaceStrings;
in
rec {
  /* An include directory as a path under the kernel directory ("" for the directory itself).

     Type: relativeDir :: string -> string

     Example:
       relativeDir "./csrc/include"  => "csrc/include"
  */
  relativeDir = d: if d == "." || d == "./" then "" else replaceStrings [ "./" ] [ "" ] d;

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
      files = [ "build.toml" ] ++ (config.framework.src or [ ]) ++ concatLists (map (k: k.src or [ ]) kernels);
      # include directories ([torch].include, this backend's [kernel.*].include) enter whole
      includeDirs = filter (d: d != "")
        (map relativeDir ((config.framework.include or [ ]) ++ concatLists (map (k: k.include or [ ]) kernels)));
      inherit (config) extDir;
    };
}
