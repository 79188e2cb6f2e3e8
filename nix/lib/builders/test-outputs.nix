# The checks and the kernel tests of the variants this machine can load (variant-set.nix's
# `runnable`): per variant its import and ABI check (check.nix), the run of the kernel's
# tests/ (kernel-tests.nix: `run`, the recorded result, and `check`, which fails on a
# failed run) and a test shell (test-shell.nix). `pkgs` of pythonCheckInputs and
# pythonNativeCheckInputs is the provider's kernel-test package set (`checkPackages`:
# the pinned set of nix/toolchain-lock.json).
#
# Type: { config; system; path; context; provider; kernelDeps; redistributable; runnable;
#         doGetKernelCheck; pythonCheckInputs; pythonNativeCheckInputs }
#       -> { checks; kernelTests; testShells; testSiteOf; hasTests; testsSrc; requiredPackage }
{ config, system, path, context, provider, kernelDeps, redistributable, runnable
, doGetKernelCheck, pythonCheckInputs, pythonNativeCheckInputs }:
let
  byName = f: vs: builtins.listToAttrs (map (v: { name = v.name; value = f v; }) vs);

  testSiteOf = v: if v.toolchain ? testSite then v.toolchain.testSite testPackages else null;
  # The variant a kernel test sees (test-env.nix's arguments), for the runs and the shells.
  testEnvArgs = v: {
    # the locked kernel-depends (LOCAL_KERNELS entries), read by test-env.nix
    config = config // { kernelDepsLocal = kernelDeps.localKernels; };
    inherit system;
    variant = v.name;
    tree = redistributable.${v.name};
    inherit (v) toolchain;
    testSite = testSiteOf v;
  };

  inherit (provider) checkPackages;
  testsDir = path + "/tests";
  hasTests = builtins.pathExists testsDir;
  testsSrc = builtins.path {
    path = testsDir;
    name = "${config.name}-tests";
    filter = p: type: baseNameOf p != "__pycache__";
  };
  asPackage = argName: i: p:
    if builtins.isAttrs p && (p.kernelBuilderCheckPackage or false) then p
    else throw "kernel-builder: ${argName}: element ${toString i} of its list is not a package of the pinned kernel-test set (got a ${builtins.typeOf p}); write it as `pkgs: with pkgs; [ einops ]`; the set holds: ${builtins.concatStringsSep ", " (builtins.attrNames checkPackages)}";
  checkList = argName: f:
    let l = f checkPackages; in
    if !(builtins.isList l) then throw "kernel-builder: ${argName} must return a list, e.g. ${argName} = pkgs: with pkgs; [ einops ];"
    else builtins.genList (i: asPackage argName i (builtins.elemAt l i)) (builtins.length l);
  requiredPackage = name: checkPackages.${name}
    or (throw "kernel-builder: the kernel-test package ${name} is not pinned in nix/toolchain-lock.json; add \"${name}\" to requests.python.test and run `kernel-builder toolchain lock`");
  testPackages = map requiredPackage [ "pytest" "numpy" "kernels" ]
    ++ checkList "pythonCheckInputs" pythonCheckInputs
    ++ checkList "pythonNativeCheckInputs" pythonNativeCheckInputs;
in
{
  inherit testSiteOf hasTests testsSrc requiredPackage;
  checks = byName
    (v: import ./check.nix {
      inherit config system;
      variant = v.name;
      drv = redistributable.${v.name};
      inherit (v) toolchain;
      pythonSrc = context.pythonFullSrc;
      importCheck = doGetKernelCheck;
    })
    runnable;
  # The kernel's tests/ against each runnable variant (none without tests/).
  kernelTests = byName
    (v: import ./kernel-tests.nix (testEnvArgs v // {
      tests = testsSrc;
      packages = testPackages;
      select = context.testSelect or null;
      testArgs = context.testArgs or { };
    }))
    (if hasTests then runnable else [ ]);
  testShells = byName (v: import ./test-shell.nix (testEnvArgs v)) runnable;
}
