# The C++ dependencies of one backend's variants (build.toml `depends`), from the table in
# python/kernel_builder/data/cpp_dependencies.json (the same one the Python side reads).
# A provided dependency is the pinned wheel's headers as a store path, handed to the
# variant build as KERNEL_BUILDER_CPP_DEPS (provider name -> path); only the variants of
# the backend whose components declare it get it. A dependency that nothing provides here
# (or that serves another backend) makes those variants unbuildable, with the reason.
# A [tvm-ffi] kernel compiles and links against apache-tvm-ffi: the lock's pinned wheel set
# (`check:tvm-ffi`, the same one its import check loads it with) as KERNEL_BUILDER_TVM_FFI.
#
# The headers, apache-tvm-ffi and Rust are the toolchain provider's answers (`cppHeaders`,
# `importCheckPaths`, `rust`; see nix/toolchains/default.nix).
#
# Type: { builderSrc; provider } -> config -> backend -> { reason : string | null; attrs : attrs; hasRust : bool }
{ builderSrc, provider }:
let
  table = builtins.fromJSON (builtins.readFile (builderSrc.outPath + "/python/kernel_builder/data/cpp_dependencies.json"));
  headers = name: provider.cppHeaders name table.providers.${name}.includes;
in
config: backend:
let
  declared = builtins.concatLists (map
    (k: map (dep: { inherit dep; entry = table.dependencies.${dep}; }) (k.depends or [ ]))
    (config.kernelsFor backend));
  needed = builtins.filter (d: !(d.entry.builtin or false)) declared;
  problem = d:
    if !(builtins.elem backend (d.entry.backends or [ ])) then
      "depends on ${d.dep}, which serves ${builtins.concatStringsSep ", " d.entry.backends} kernels, not ${backend}"
    else if !(d.entry ? lock) then "depends on ${d.dep}: ${d.entry.unavailable}"
    else null;
  problems = builtins.filter (p: p != null) (map problem needed);
  providers = builtins.listToAttrs (map (d: { name = d.entry.lock; value = headers d.entry.lock; })
    (builtins.filter (d: problem d == null) needed));
  isTvmFfi = config.toml ? tvm-ffi;
  tvmFfi = provider.importCheckPaths.tvm-ffi or null;
  tvmFfiProblem =
    if isTvmFfi && tvmFfi == null
    then [ "is a [tvm-ffi] kernel, and the toolchain lock pins no apache-tvm-ffi (requests.python.importCheck.tvm-ffi)" ]
    else [ ];
  # Rust components (edition 6 rust-*): rust-cpu builds with the lock's pinned Rust
  # (KERNEL_BUILDER_RUST); the other Rust languages need compilers nothing pins here
  # (languages.nix `unavailable`, the same words as python/kernel_builder/driver/rust.py).
  languages = import ../pure/languages.nix;
  rustKernels = builtins.filter (k: builtins.match "rust-.*" (k.value.language or "") != null)
    (map (name: { inherit name; value = config.toml.kernel.${name}; })
      (builtins.filter (name: (languages.backendOf config.toml.kernel.${name}) == backend) (builtins.attrNames (config.toml.kernel or { }))));
  rustProblem = k:
    if languages.unavailable ? ${k.value.language} then "[kernel.${k.name}] is ${k.value.language}: ${languages.unavailable.${k.value.language}}"
    else if provider.rust == null then "[kernel.${k.name}] is ${k.value.language}, and the toolchain lock pins no Rust (requests.debian.groups.rust)"
    else null;
  rustProblems = builtins.filter (p: p != null) (map rustProblem rustKernels);
  allProblems = problems ++ tvmFfiProblem ++ rustProblems;
in
{
  reason = if allProblems == [ ] then null else "build.toml ${builtins.concatStringsSep "; " allProblems}";
  attrs = (if providers == { } then { } else { KERNEL_BUILDER_CPP_DEPS = builtins.toJSON providers; })
    // (if isTvmFfi && tvmFfi != null then { KERNEL_BUILDER_TVM_FFI = tvmFfi; } else { })
    // (if rustKernels != [ ] && provider.rust != null then { KERNEL_BUILDER_RUST = provider.rust; } else { });
  # A variant with Rust components builds in one derivation (cargo, then CMake), not per object.
  hasRust = rustKernels != [ ];
}
