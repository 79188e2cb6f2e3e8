# The arguments genKernelFlakeOutputs accepts: upstream's (self, path, rev, torchVersions,
# pythonCheckInputs, pythonNativeCheckInputs, doGetKernelCheck) and ours (system,
# toolchainProvider). Anything else is a mistake the kernel author should hear about, not
# an argument silently ignored.
let
  inherit (builtins) attrNames concatStringsSep elem filter isFunction;
in
rec {
  /* Every accepted argument name.

     Type: accepted :: [string]
  */
  accepted = [
    "self" "path" "rev" "torchVersions" "pythonCheckInputs" "pythonNativeCheckInputs" "doGetKernelCheck"
    "system" "toolchainProvider"
  ];

  /* The argument names that are not accepted, sorted.

     Type: unknown :: attrset -> [string]

     Example:
       unknown { path = ./.; torchVersion = _: [ ]; }
       => [ "torchVersion" ]
  */
  unknown =
    # the arguments given to genKernelFlakeOutputs
    args: filter (name: !(elem name accepted)) (attrNames args);

  /* The arguments, or an evaluation error naming the unknown ones (and the accepted ones),
     or a function-valued argument that is not a function.

     Type: check :: attrset -> attrset
  */
  check =
    # the arguments given to genKernelFlakeOutputs
    args:
    let
      bad = unknown args;
      notFunction = filter (name: args ? ${name} && !(isFunction args.${name}))
        [ "torchVersions" "pythonCheckInputs" "pythonNativeCheckInputs" ];
    in
    if bad != [ ] then
      throw "kernel-builder: genKernelFlakeOutputs got unknown argument${if builtins.length bad > 1 then "s" else ""} ${concatStringsSep ", " bad}; accepted: ${concatStringsSep ", " accepted} (see docs/nix.md)"
    else if notFunction != [ ] then
      throw "kernel-builder: genKernelFlakeOutputs: ${builtins.head notFunction} must be a function, e.g. ${builtins.head notFunction} = pkgs: with pkgs; [ einops ];"
    else args;
}
