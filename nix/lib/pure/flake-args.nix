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

  /* The systems a kernel flake can be evaluated for: those of build-sets.json.

     Type: systems :: [string]
  */
  systems = builtins.sort builtins.lessThan (builtins.attrNames (builtins.listToAttrs (map
    (system: { name = system; value = null; })
    (builtins.concatMap (set: set.systems) (builtins.fromJSON (builtins.readFile ../../build-sets.json)).buildSets))));

  /* What a function-valued argument is for, shown when it is not a function.

     Type: examples :: attrset
  */
  examples = {
    torchVersions = "torchVersions = all: builtins.filter (v: v ? cpu) all; (it gets the default build-set records and returns those to build)";
    pythonCheckInputs = "pythonCheckInputs = pkgs: with pkgs; [ einops ];";
    pythonNativeCheckInputs = "pythonNativeCheckInputs = pkgs: with pkgs; [ einops ];";
  };

  /* The first thing wrong with the arguments' names or values (a message), or null. The
     checks here are the ones the library's Nix types would otherwise report as a type or
     missing-attribute error far from the kernel's flake.nix.

     Type: problem :: attrset -> string | null

     Example:
       problem { path = ./.; doGetKernelCheck = "false"; }
       => "doGetKernelCheck must be true or false, got a string (\"false\")"
  */
  problem =
    # the arguments given to genKernelFlakeOutputs
    args:
    let
      bad = unknown args;
      notFunction = filter (name: args ? ${name} && !(isFunction args.${name})) (attrNames examples);
      shown = value: if builtins.elem (builtins.typeOf value) [ "string" "int" "float" "bool" "null" ] then " (${builtins.toJSON value})" else "";
      typeName = value: let t = builtins.typeOf value; in
        { int = "an integer"; float = "a float"; string = "a string"; bool = "a boolean"; null = "null";
          list = "a list"; set = "an attribute set"; path = "a path"; lambda = "a function"; }.${t} or "a ${t}";
    in
    if bad != [ ] then
      "unknown argument${if builtins.length bad > 1 then "s" else ""} ${concatStringsSep ", " bad}; accepted: ${concatStringsSep ", " accepted}"
    else if notFunction != [ ] then
      let name = builtins.head notFunction; in
      "${name} must be a function, got ${typeName args.${name}}${shown args.${name}}; e.g. ${examples.${name}}"
    else if args ? doGetKernelCheck && !(builtins.isBool args.doGetKernelCheck) then
      "doGetKernelCheck must be true or false, got ${typeName args.doGetKernelCheck}${shown args.doGetKernelCheck}"
    else if args ? system && !(builtins.elem args.system systems) then
      (if builtins.isString args.system
       then "system = ${builtins.toJSON args.system} is not a system kernel-builder builds for; one of: ${concatStringsSep ", " systems}"
       else "system must be a string, got ${typeName args.system}; one of: ${concatStringsSep ", " systems}")
    else null;

  /* The arguments, or an evaluation error saying what is wrong with them (``problem``),
     naming genKernelFlakeOutputs and the kernel's flake.nix.

     Type: check :: attrset -> attrset
  */
  check =
    # the arguments given to genKernelFlakeOutputs
    args:
    let found = problem args; in
    if found == null then args
    else throw "kernel-builder: the kernel's flake.nix: genKernelFlakeOutputs: ${found} (see docs/nix.md)";
}
