# `ciTests.<variant>` / `ci-test` (upstream's names): the kernel's tests against one built
# variant as a program, `$out/bin/ci-test`, to run on another machine (a GPU runner) after
# `nix-store --export $(nix-store -qR <out>)` and `nix-store --import` there. Building it
# runs nothing; the script names only store paths (the variant, the tests, the toolchain
# Python and its kernel-test packages, the GPU plugin), so its closure is all it needs.
#
# As upstream, it runs `pytest -m kernels_ci` (the tests a kernel marks as cheap enough for
# CI; pytest's exit 5, nothing selected, passes); arguments are passed on to pytest, so
# `ci-test -m ""` runs every test. It sees the variant as the sandboxed runs do (test-env.nix:
# `import <name>`, KERNEL_BUILD_DIR, LOCAL_KERNELS) and loads the same GPU plugin (and
# ci_test_markers.py, which registers the kernels_ci marker): on a
# machine without the GPU a test needs, that test is skipped with the reason. libcuda comes
# from the machine (/run/opengl-driver/lib when it exists, as on kernels-community's runners).
#
# Type: { config; system; variant; tree; toolchain; tests : path | null; testSite : drv | null } -> derivation
{ config, system, variant, tree, toolchain, tests, testSite }:
let
  inherit (builtins) attrNames concatStringsSep filter map replaceStrings;
  q = s: "'" + replaceStrings [ "'" ] [ "'\\''" ] (toString s) + "'";
  site = if testSite == null then "" else "${testSite}";
  # the toolchain's variables as the sandboxed runs have them (CUDA_HOME, CC, ...), less
  # what only a builder needs
  exports = concatStringsSep "\n" (map (n: "export ${n}=${q toolchain.env.${n}}")
    (filter (n: n != "PATH" && n != "sandboxShell") (attrNames toolchain.env)));
  script = ''
    #!${toolchain.builder}
    # ci-test: ${config.name}'s tests against ${variant} (kernel-builder's ciTests.${variant}).
    # Usage: ci-test [PYTEST ARGUMENTS]   (default selection: -m kernels_ci)
    set -u
    export PATH=${q ((if site == "" then "" else "${site}/bin:") + toolchain.env.PATH)}
    ${exports}
    tests=${q (if tests == null then "" else tests)}
    if [ -z "$tests" ]; then
      echo "ci-test: ${config.name} has no tests/ directory: nothing to run"
      exit 0
    fi
    work=$(mktemp -d "''${TMPDIR:-/tmp}/ci-test.XXXXXX") || exit 1
    trap 'rm -rf "$work"' EXIT
    mkdir -p "$work/import" "$work/plugin" "$work/home"
    cp -r "$tests" "$work/tests" && chmod -R u+w "$work/tests" || exit 1
    ln -s ${q "${tree}/${variant}"} "$work/import/"${q config.pythonName}
    cp ${q "${./kernel_tests_gpu.py}"} "$work/plugin/kernel_tests_gpu.py" || exit 1
    cp ${q "${./ci_test_markers.py}"} "$work/plugin/ci_test_markers.py" || exit 1
    export PYTHONPATH="$work/import:$work/plugin"${if site == "" then "" else q ":${site}/site-packages"}
    export PYTHONDONTWRITEBYTECODE=1 PYTHONNOUSERSITE=1 HOME="''${HOME:-$work/home}"
    export KERNEL_BUILD_DIR=${q tree} KERNEL_BUILDER_TEST_VARIANT=${q variant}
    ${if config.hubRepoId == null then "" else "export LOCAL_KERNELS=${q "${config.hubRepoId}=${tree}"}"}
    unset LD_LIBRARY_PATH
    if [ -d /run/opengl-driver/lib ]; then export LD_LIBRARY_PATH=/run/opengl-driver/lib; fi
    cd "$work" || exit 1
    echo "ci-test: testing ${variant} of ${config.name} with ${toolchain.toolchainPython}"
    ${q toolchain.toolchainPython} -m pytest tests -m kernels_ci -p no:cacheprovider -p kernel_tests_gpu -p ci_test_markers -rfEs "$@"
    status=$?
    if [ "$status" -eq 5 ]; then
      echo "ci-test: no test selected (upstream's ci-test runs the tests marked @pytest.mark.kernels_ci; pass -m \"\" for all)"
      exit 0
    fi
    exit "$status"
  '';
in
import ./script-program.nix {
  name = "${config.name}-${variant}-ci-test";
  program = "ci-test";
  inherit system toolchain script;
}
