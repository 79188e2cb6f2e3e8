# The pinned toolchain's derivations, built from nix/toolchain-lock.json (see pinned.nix
# for the picture). Shared by the provider and the kernel-builder CLI package.
#
# For the lock's own system (x86_64-linux) from its top-level requests; for a native host
# of another machine (`requests.hosts.<system>`, aarch64-linux) from that host's requests
# and its `<system>/<group>` groups: that machine's Debian packages and wheels, derivations
# of that system, the same builder scripts with that machine's names (retarget.sh).
#
# Type: { system } -> { lock; native; fetchArtifact; seed; runtime; cc; ccLink; python; rust; driver; cli; envs; cudas; cross; checkPackages; testSite; wheelHeaders; importCheckPaths }
{ system }:
let
  # The schema this library reads; another one (a lock from a newer or older kernel-builder,
  # or a hand edit) stops evaluation naming the file, before any attribute of it is used.
  # `kernel-builder build` validates the whole lock in Python first (lockfile.load_lock).
  lockFile = ../../toolchain-lock.json;
  rawLock = builtins.fromJSON (builtins.readFile lockFile);
  lock =
    if builtins.isAttrs rawLock && (rawLock.schema or null) == 1 then rawLock
    else throw "kernel-builder: ${toString lockFile} (kernel-builder's nix/toolchain-lock.json): schema ${builtins.toJSON (rawLock.schema or null)} is not supported, this kernel-builder reads schema 1; regenerate it with `kernel-builder toolchain lock`";
  # The native host this is, or null for the lock's own system (and for a system the lock
  # pins nothing for, whose build sets pinned.nix reports as unavailable).
  host = if system == lock.system then null else lock.requests.hosts.${system} or null;
  native = system == lock.system || host != null;
  hostGroup = name: if host == null then name else "${system}/${name}";
  hostRequests = if host == null then lock.requests else host;
  pinnedSets = hostRequests.buildSets;

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
  group = name: map fetchArtifact lock.groups.${hostGroup name};

  # The seed has no URL of its own (it is a member of a pinned .deb): only
  # `kernel-builder toolchain fetch` can put it in the store, and this URL says so.
  seedRecord = if host == null then lock.seed else lock.hostSeeds.${system};
  seed = derivation {
    name = seedRecord.name;
    system = "builtin";
    builder = "builtin:fetchurl";
    url = "https://seed.invalid/run-kernel-builder-toolchain-fetch/${seedRecord.name}";
    outputHashMode = "recursive";
    outputHashAlgo = "sha256";
    outputHash = seedRecord.narSha256;
    unpack = false;
    executable = false;
    preferLocalBuild = true;
  };

  # The builder scripts name x86_64's paths (x86_64-linux-gnu, ld-linux-x86-64.so.2); on a
  # native host each runs through retarget.sh, which gives it (and lib.sh) the host's names.
  retarget = script: if host == null then [ script ] else [ ./retarget.sh script ];
  retargetAttrs = if host == null then { } else { hostTriple = machines.${host.machine}.triple; hostLdSo = machines.${host.machine}.ldSo; };

  runtime = derivation ({
    name = "kb-runtime";
    inherit system seed;
    builder = "${seed}/busybox";
    args = [ "sh" "-e" ] ++ retarget ./runtime-builder.sh;
    debs = group "runtime" ++ group "tools";
  } // retargetAttrs);

  mkBuilt = name: script: attrs: derivation ({
    inherit name system runtime;
    builder = "${runtime}/bin/bash";
    args = [ "-e" ] ++ retarget script;
    outputs = [ "out" ];
    libSh = ./lib.sh;
  } // retargetAttrs // attrs);

  cc = mkBuilt "kb-cc-gcc12" ./cc-builder.sh {
    sysrootDebs = group "sysroot";
    compilerDebs = group "compiler";
    runtimeDebs = group "runtime";
  };
  python = mkBuilt "kb-python3.11" ./python-builder.sh { debs = group "python"; };
  # rustc and cargo (Debian's rustc-web/cargo-web, the lock's `rust` group) for the Rust
  # components of edition-6 kernels (rust-cpu); null when the lock pins no Rust.
  rust = if lock.groups ? ${hostGroup "rust"} then mkBuilt "kb-rust" ./rust-builder.sh { debs = group "rust"; } else null;

  # cc for manylinux_2_28: shared objects link against glibc 2.28's symbol versions (stubs
  # generated from the ziglang wheel's symbol lists), programs against the sysroot's glibc.
  # Link-time only: nothing built here loads the stubs. See docs/nix.md.
  glibcVersion = "2.28";
  # What the stubs builder needs to know of each machine: its GNU triple, its ld.so, the
  # BFD format of its linker scripts, glibc's first symbol version there (what the self-test
  # expects dlsym to bind to), and where its sysroot keeps glibc's libraries (the native
  # sysroot's multiarch directory; the cross packages' usr/<triple>/lib).
  machines = {
    x86_64 = { triple = "x86_64-linux-gnu"; ldSo = "ld-linux-x86-64.so.2"; ldFormat = "elf64-x86-64"; baseVersion = "2.2.5"; sysrootLib = "usr/lib/x86_64-linux-gnu"; };
    aarch64 = { triple = "aarch64-linux-gnu"; ldSo = "ld-linux-aarch64.so.1"; ldFormat = "elf64-littleaarch64"; baseVersion = "2.17"; sysrootLib = "usr/aarch64-linux-gnu/lib"; cudaTarget = "sbsa-linux"; };
  };
  mkLink = name: compiler: machine: mkBuilt name ./glibc-stubs-builder.sh ({
    inherit python glibcVersion;
    cc = compiler;
    ziglang = builtins.head (group "env:glibc-stubs");
    generator = ./glibc-stubs.py;
    wrapper = ./glibc-link-wrapper.sh;
    checkScript = ./check-glibc-link.sh;
  } // machines.${machine});
  # A native host's sysroot keeps glibc in its multiarch directory, as x86_64's does.
  nativeMachine = if host == null then machines.x86_64
    else builtins.removeAttrs machines.${host.machine} [ "sysrootLib" "cudaTarget" ] // { sysrootLib = "usr/lib/${machines.${host.machine}.triple}"; };
  ccLink = mkBuilt "kb-cc-gcc12-glibc${glibcVersion}" ./glibc-stubs-builder.sh ({
    inherit python glibcVersion cc;
    ziglang = builtins.head (group "env:glibc-stubs");
    generator = ./glibc-stubs.py;
    wrapper = ./glibc-link-wrapper.sh;
    checkScript = ./check-glibc-link.sh;
  } // nativeMachine);
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
  pinnedEnvs = envs;

  sitePackages = env: "${env}/lib/python3.11/site-packages";
  cudaOf = envName:
    let version = hostRequests.cuda.${envName} or null; in
    if version == null then null
    else mkBuilt "kb-cuda${version}" ./cuda-builder.sh {
      wheelCuda = "${sitePackages envs.${envName}}/nvidia/cu${builtins.head (builtins.splitVersion version)}";
    };
  cudas = builtins.listToAttrs (map (name: { inherit name; value = cudaOf name; }) envNames);

  # Cross targets (`requests.targets.<system>`, e.g. aarch64-linux): x86_64 programs that
  # make the target's modules. Per target: the cross compiler (its Debian groups), the same
  # compiler linking against that machine's glibc 2.28 stubs, and each environment (the
  # target's torch, unpacked, with a CMake toolchain file). See docs/nix.md.
  crossOf = targetSystem: target:
    let
      machine = machines.${target.machine};
      crossCc = mkBuilt "kb-cc-gcc12-${machine.triple}" ./cross-cc-builder.sh {
        inherit (machine) triple;
        crossDebs = builtins.concatMap group target.debianGroups;
      };
      crossLink = mkLink "kb-cc-gcc12-${machine.triple}-glibc${glibcVersion}" crossCc target.machine;
      # pip --target installs a wheel only for the platform tags it is told: exactly those of
      # the wheels the lock pinned (`toolchain lock` chose them by its manylinux_2_28 rule).
      platformArgs = keys:
        let
          tagsOf = key: builtins.filter (t: builtins.isString t && t != "any")
            (builtins.split "\\." (builtins.head (builtins.match ".*-([^-]+)\\.whl" lock.artifacts.${key}.file)));
          wheelKeys = builtins.filter (key: lock.artifacts.${key}.kind == "wheel") keys;
          tags = builtins.foldl' (acc: t: if builtins.elem t acc then acc else acc ++ [ t ]) [ ] (builtins.concatMap tagsOf wheelKeys);
        in
        builtins.concatStringsSep " " (map (t: "--platform ${t}") tags);
      crossEnv = name: mkBuilt "kb-env-${name}" ./cross-env-builder.sh {
        inherit python pip;
        inherit (machine) triple;
        inherit (target) machine;
        cc = crossCc;
        ccLink = crossLink;
        wheels = group "env:${name}";
        pipPlatforms = platformArgs lock.groups."env:${name}";
      };
      envs = builtins.mapAttrs (name: _: crossEnv name) target.environments;
      # The import check's Python of each environment (`requests.targets.<system>.emulation`):
      # qemu-user running the target's CPython, with the environment's torch and what it
      # loads; null when the lock pins no emulation for it. See emulated-python-builder.sh.
      emulation = target.emulation or null;
      emulatedOf = name:
        if emulation == null || !(emulation.environments ? ${name}) then null
        else mkBuilt "kb-emulated-${name}" ./emulated-python-builder.sh {
          inherit python pip;
          inherit (machine) triple;
          inherit (target) machine;
          cc = crossCc;
          debs = builtins.concatMap group emulation.debianGroups;
          wheels = group "env:${name}" ++ group "env:${name}-emulated"; # lockfile.emulated_group
          pipPlatforms = platformArgs (lock.groups."env:${name}" ++ lock.groups."env:${name}-emulated");
          standIns = emulation.standIns.${name} or [ ];
          loadOnly = emulation.loadOnly.${name} or [ ];
        };
      emulated = builtins.mapAttrs (name: _: emulatedOf name) target.environments;
      # The CUDA home of a cross environment (`requests.targets.<system>.cuda`): this
      # machine's nvcc (from the native environment `nativeName`) with the target's CUDA
      # headers and libraries; null when the environment has no CUDA.
      cudaOf = name: nativeName:
        let version = (target.cuda or { }).${name} or null; in
        if version == null then null
        else mkBuilt "kb-cuda${version}-${machine.triple}" ./cuda-builder.sh {
          wheelCuda = "${sitePackages envs.${name}}/nvidia/cu${builtins.head (builtins.splitVersion version)}";
          hostCuda = "${sitePackages pinnedEnvs.${nativeName}}/nvidia/cu${builtins.head (builtins.splitVersion version)}";
          cudaTarget = machine.cudaTarget;
        };
    in
    {
      inherit targetSystem envs cudaOf emulated;
      cc = crossCc;
      ccLink = crossLink;
      buildSets = target.buildSets;
    };
  # A native host cross-builds for no one (its lock entry has no targets).
  cross = if host == null then builtins.mapAttrs crossOf (lock.requests.targets or { }) else { };

  # The kernel-test package set (requests.python.test; `pkgs` of a kernel flake's
  # pythonCheckInputs): one value per name, the group of wheels it needs (its own and its
  # dependencies'), resolved by `kernel-builder toolchain lock` into `test:<name>`.
  prefix = hostGroup "test:";
  testGroups = builtins.filter (g: builtins.substring 0 (builtins.stringLength prefix) g == prefix) (builtins.attrNames lock.groups);
  checkPackages = builtins.listToAttrs (map
    (group:
      let name = builtins.substring (builtins.stringLength prefix) (-1) group; in
      { inherit name; value = { kernelBuilderCheckPackage = true; pname = name; keys = lock.groups.${group}; }; })
    testGroups);

  # A wheel's project as PyPI normalizes it: "PyYAML-6.0.4-....whl" -> "pyyaml".
  upper = [ "A" "B" "C" "D" "E" "F" "G" "H" "I" "J" "K" "L" "M" "N" "O" "P" "Q" "R" "S" "T" "U" "V" "W" "X" "Y" "Z" "_" "." ];
  lower = [ "a" "b" "c" "d" "e" "f" "g" "h" "i" "j" "k" "l" "m" "n" "o" "p" "q" "r" "s" "t" "u" "v" "w" "x" "y" "z" "-" "-" ];
  projectOf = key: builtins.replaceStrings upper lower (builtins.head (builtins.split "-" key));

  # The check packages' wheels as a site-packages directory beside one environment: the
  # wheels of projects the environment already has are left out (its torch, numpy win), as
  # are repeats. Null when nothing is left to install.
  testSite = envName: packages:
    let
      have = map projectOf lock.groups.${hostGroup "env:${envName}"};
      keys = builtins.foldl'
        (acc: key: if builtins.elem (projectOf key) (have ++ map projectOf acc) then acc else acc ++ [ key ])
        [ ] (builtins.concatMap (p: p.keys) packages);
    in
    if keys == [ ] then null
    else mkBuilt "kb-test-site-${envName}" ./test-site-builder.sh {
      python = "${envs.${envName}}/bin/python";
      inherit pip;
      wheels = map fetchArtifact keys;
    };

  # The site-packages of an import-check set (`requests.python.importCheck.<name>`: the
  # `kernels` loader's runtime dependencies, or one python-depends name), which the
  # import check appends to the toolchain Python's path; null when the lock has none.
  importCheckPaths = builtins.mapAttrs
    (name: _: sitePackages (mkEnvOf "kb-check-${name}" "check:${name}"))
    (hostRequests.python.importCheck or { });

  # The header directories `includes` of the `requests.cpp.<name>` wheel (a C++ dependency,
  # see python/kernel_builder/data/cpp_dependencies.json), as a store path.
  # The lock's own groups: these wheels are headers only, for every machine (py3-none-any).
  wheelHeaders = name: includes: mkBuilt "kb-${name}-headers" ./wheel-headers-builder.sh {
    wheels = map fetchArtifact lock.groups."cpp:${name}";
    inherit includes;
  };

in
{
  inherit lock native fetchArtifact pinnedSets seed runtime cc ccLink python rust driver cli envs cudas cross checkPackages testSite wheelHeaders importCheckPaths;
}
