# The pinned toolchain's derivations, built from nix/toolchain-lock.json (see pinned.nix
# for the picture). Shared by the provider and the kernel-builder CLI package.
#
# Type: { system } -> { lock; seed; runtime; cc; python; driver; cli; envs; cudas; wheelHeaders; importCheckPaths }
{ system }:
let
  lock = builtins.fromJSON (builtins.readFile ../../toolchain-lock.json);
  pinnedSets = lock.requests.buildSets;

  fetchArtifact = key:
    let artifact = lock.artifacts.${key}; in
    derivation {
      name = key;
      system = "builtin";
      builder = "builtin:fetchurl";
      inherit (artifact) url;
      urls = [ artifact.url ];
      outputHashMode = "flat";
      outputHashAlgo = "sha256";
      outputHash = artifact.sha256;
      unpack = false;
      executable = false;
      preferLocalBuild = true;
    };
  group = name: map fetchArtifact lock.groups.${name};

  # The seed has no URL of its own (it is a member of a pinned .deb): only
  # `kernel-builder toolchain fetch` can put it in the store, and this URL says so.
  seed = derivation {
    name = lock.seed.name;
    system = "builtin";
    builder = "builtin:fetchurl";
    url = "https://seed.invalid/run-kernel-builder-toolchain-fetch/${lock.seed.name}";
    outputHashMode = "recursive";
    outputHashAlgo = "sha256";
    outputHash = lock.seed.narSha256;
    unpack = false;
    executable = false;
    preferLocalBuild = true;
  };

  runtime = derivation {
    name = "kb-runtime";
    inherit system seed;
    builder = "${seed}/busybox";
    args = [ "sh" "-e" ./runtime-builder.sh ];
    debs = group "runtime" ++ group "tools";
  };

  mkBuilt = name: script: attrs: derivation ({
    inherit name system runtime;
    builder = "${runtime}/bin/bash";
    args = [ "-e" script ];
    outputs = [ "out" ];
    libSh = ./lib.sh;
  } // attrs);

  cc = mkBuilt "kb-cc-gcc12" ./cc-builder.sh {
    sysrootDebs = group "sysroot";
    compilerDebs = group "compiler";
    runtimeDebs = group "runtime";
  };
  python = mkBuilt "kb-python3.11" ./python-builder.sh { debs = group "python"; };
  pip = builtins.head (group "env:installer");
  mkEnvOf = name: groupName: mkBuilt name ./env-builder.sh {
    inherit python pip;
    wheels = group groupName;
  };
  mkEnv = name: mkEnvOf "kb-env-${name}" "env:${name}";
  driver = mkEnv "driver";
  cli = mkEnv "cli";
  envNames = builtins.attrNames (builtins.listToAttrs (map (n: { name = n; value = null; }) (builtins.attrValues pinnedSets)));
  envs = builtins.listToAttrs (map (name: { inherit name; value = mkEnv name; }) envNames);

  sitePackages = env: "${env}/lib/python3.11/site-packages";
  cudaOf = envName:
    let version = lock.requests.cuda.${envName} or null; in
    if version == null then null
    else mkBuilt "kb-cuda${version}" ./cuda-builder.sh {
      wheelCuda = "${sitePackages envs.${envName}}/nvidia/cu${builtins.head (builtins.splitVersion version)}";
    };
  cudas = builtins.listToAttrs (map (name: { inherit name; value = cudaOf name; }) envNames);

  # The site-packages of an import-check set (`requests.python.importCheck.<name>`: the
  # `kernels` loader's runtime dependencies, or one python-depends name), which the
  # import check appends to the toolchain Python's path; null when the lock has none.
  importCheckPaths = builtins.mapAttrs
    (name: _: sitePackages (mkEnvOf "kb-check-${name}" "check:${name}"))
    (lock.requests.python.importCheck or { });

  # The header directories `includes` of the `requests.cpp.<name>` wheel (a C++ dependency,
  # see python/kernel_builder/data/cpp_dependencies.json), as a store path.
  wheelHeaders = name: includes: mkBuilt "kb-${name}-headers" ./wheel-headers-builder.sh {
    wheels = group "cpp:${name}";
    inherit includes;
  };

in
{
  inherit lock pinnedSets seed runtime cc python driver cli envs cudas wheelHeaders importCheckPaths;
}
