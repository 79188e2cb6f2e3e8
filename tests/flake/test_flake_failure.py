"""flake.failure: what a failed variant's log means to its author, and the error of a
build with nothing to build here."""

from __future__ import annotations

from kernel_builder.config.model import Backend
from kernel_builder.flake.failure import FailureKind, explain, nothing_buildable, python_depends_hint
from kernel_builder.flake.variant_table import parse_table
from kernel_builder.variants.buildsets import BuildSet
from kernel_builder.variants.matrix import MatrixVariant
from kernel_builder.variants.names import parse

IMPORT_FAILURE = [
    "kernel-builder: building torch214-cxx11-cpu-x86_64-linux with the pinned toolchain (/nix/store/x/bin/python)",
    "error: variant torch214-cxx11-cpu-x86_64-linux failed 1 check(s):",
    "  - import: importing the variant with /nix/store/x/bin/python failed:",
    'File "/build/out/torch214-cxx11-cpu-x86_64-linux/__init__.py", line 5, in <module>',
    "    import einops",
    "ModuleNotFoundError: No module named 'einops'",
    'hint: see docs/build.md ("What each check failure means") for the fix of each',
]


def test_a_compile_failure_shows_the_first_error_and_counts_the_rest() -> None:
    log = ["/build/src/a.cpp:2:2: warning: #warning noisy [-Wcpp]"] * 40 + [
        "/build/src/relu.cpp:3:10: fatal error: cutlass/cutlass.h: No such file or directory",
        "    3 | #include <cutlass/cutlass.h>",
    ] + ["/build/src/b.cpp:2:2: warning: #warning noisy [-Wcpp]"] * 40
    failure = explain(log)
    assert failure.kind is FailureKind.COMPILE and (failure.errors, failure.warnings) == (1, 80)
    assert failure.lines == tuple(log[40:42])


def test_a_missing_module_names_it_and_how_to_declare_it() -> None:
    failure = explain(IMPORT_FAILURE)
    assert failure.kind is FailureKind.IMPORT and failure.module == "einops"
    assert failure.hint == 'declare it in build.toml: python-depends = ["einops"] in [general] (docs/build-toml.md)'
    assert "REGISTER_EXTENSION" not in " ".join(failure.lines) and "docs/build.md" not in " ".join(failure.lines)
    assert "python-depends" in python_depends_hint("kb_not_a_package") and "python_dependencies.json" in python_depends_hint("x")


def test_any_other_failure_shows_the_drivers_error_without_its_generic_hint() -> None:
    log = ["noise"] * 50 + ["error: expected one _relu*.so in /build/x, found []", "hint: something generic"]
    failure = explain(log)
    assert failure.kind is FailureKind.DRIVER and failure.lines == ("error: expected one _relu*.so in /build/x, found []",)
    assert explain(["only", "noise"]).kind is FailureKind.UNKNOWN


def test_nothing_buildable_names_the_build_sets_and_systems_and_no_host_toolchain() -> None:
    darwin = BuildSet("2.13", Backend.METAL, "aarch64-darwin")
    elsewhere = [MatrixVariant(parse("torch213-metal-aarch64-darwin"), darwin, True)]
    error = nothing_buildable("mk", "x86_64-linux", (), elsewhere)
    assert "nothing of kernel mk can be built on x86_64-linux; nothing was built" in error.message
    assert "on aarch64-darwin: torch213-metal-aarch64-darwin (build set torch2.13-metal)" in error.message
    assert error.hint == "build it on an aarch64-darwin machine with `kernel-builder build`"
    rocm = parse_table([{"name": "torch213-cxx11-rocm71-x86_64-linux", "backend": "rocm", "bundle": True, "buildable": False,
                         "reason": "no rocm toolchain here", "buildSet": "torch2.13-rocm7.1"}])
    error = nothing_buildable("rk", "x86_64-linux", rocm, [])
    assert "torch213-cxx11-rocm71-x86_64-linux (build set torch2.13-rocm7.1): no rocm toolchain here" in error.message
    assert "--toolchain host" not in str(error)


def test_paths_are_the_kernels_and_the_import_site_is_named() -> None:
    log = ["/build/kernel-builder/torch213-cxx11-cpu-x86_64-linux-d54d33fed168cb52/src/torch-ext/torch_binding.cpp:3:10: "
           "fatal error: cutlass/cutlass.h: No such file or directory", "    3 | #include <cutlass/cutlass.h>"]
    assert explain(log).lines[0] == "torch-ext/torch_binding.cpp:3:10: fatal error: cutlass/cutlass.h: No such file or directory"
    frames = IMPORT_FAILURE[:3] + [
        '  File "/nix/store/ik2w-relu-torch214-cxx11-cpu-x86_64-linux/.torch214-cxx11-cpu-x86_64-linux.pid1.ad0n.tmp/__init__.py", line 26, in <module>',
        "    import einops  # noqa: F401",
        "ModuleNotFoundError: No module named 'einops'",
    ]
    assert explain(frames).lines[1] == "  at __init__.py:26: import einops  # noqa: F401"
