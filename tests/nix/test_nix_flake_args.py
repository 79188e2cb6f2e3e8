"""genKernelFlakeOutputs takes upstream's arguments with upstream's meaning (evaluation only).

Kernel flakes here are written in the style of the kernels-community ones: a
``torchVersions`` function over records with upstream's field names, ``pythonCheckInputs``
as ``pkgs: with pkgs; [ ... ]``. The variant lists they give are compared with the Python
matrix over the build sets an upstream-style filter keeps, filtered here in Python.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from kernel_builder.config import load
from kernel_builder.errors import NixError
from kernel_builder import nix
from kernel_builder.flake.kernel_flake import prepare_kernel_flake
from kernel_builder.nix.steps import step_of
from kernel_builder.variants.buildsets import load_build_sets
from nix_support import copy_kernel, environ_set, flake_variants, snapshot_builder

SYSTEM = "x86_64-linux"

# Filters as kernels-community flakes write them (from their description, in our words).
CPU_ONLY_ON_X86 = """all: builtins.map (v: v // {
      systems = builtins.filter (s: !(v ? cpu) || s == "x86_64-linux") v.systems; }) all"""
ONE_SET = """all: builtins.filter (v: v.torchVersion == "2.14" && (v.cudaVersion or null) == "13.0") all"""
NO_XPU_BEFORE_213 = """all: builtins.filter (v: !(v ? xpuVersion) || builtins.compareVersions v.torchVersion "2.13" >= 0) all"""


@pytest.fixture(scope="module", autouse=True)
def state(tmp_path_factory: pytest.TempPathFactory) -> Path:
    path = tmp_path_factory.mktemp("state")
    root = snapshot_builder(tmp_path_factory.mktemp("builder"))
    with environ_set({"KERNEL_BUILDER_STATE_DIR": str(path), "KERNEL_BUILDER_ROOT": str(root)}):
        yield path


def _with_xpu(kernel: Path) -> None:
    """relu with an XPU kernel too, so that XPU build sets give their own variants."""
    toml = kernel / "build.toml"
    text = toml.read_text().replace('backends = ["cpu", "cuda"]', 'backends = ["cpu", "cuda", "xpu"]')
    toml.write_text(text + '\n[kernel.relu_xpu]\nbackend = "xpu"\ndepends = ["torch"]\nsrc = ["relu_xpu/relu.cpp"]\n')
    (kernel / "relu_xpu").mkdir()
    (kernel / "relu_xpu" / "relu.cpp").write_text("// xpu\n")


def _kernel(tmp_path: Path, extra: str, example: str = "relu") -> Path:
    kernel = copy_kernel(example, tmp_path / example, git=False)
    _with_xpu(kernel)
    text = (kernel / "flake.nix").read_text()
    (kernel / "flake.nix").write_text(text.replace("path = ./.; }", f"path = ./.;\n{extra}\n}}"))
    return kernel


def _eval(kernel: Path, attr: str) -> object:
    prepared = prepare_kernel_flake(kernel)
    return nix.eval_json(prepared.installable(attr), flake_args=prepared.flake_args)


def _python_variants(kernel: Path, keep) -> list[str]:
    sets = [s for s in load_build_sets() if keep(s)]
    return [v.name for v in flake_variants(load(kernel), sets, SYSTEM)]


def test_empty_torch_versions_gives_no_variants(tmp_path: Path) -> None:
    kernel = _kernel(tmp_path, "torchVersions = _: [ ];")
    assert _eval(kernel, "variants") == []
    assert _eval(kernel, "variantTable") == []


@pytest.mark.parametrize(
    ("nix_filter", "keep"),
    [
        (CPU_ONLY_ON_X86, lambda s: s.backend.value != "cpu" or s.system == "x86_64-linux"),
        (ONE_SET, lambda s: s.torch == "2.14" and s.backend_version == "13.0"),
        (NO_XPU_BEFORE_213, lambda s: s.backend.value != "xpu" or tuple(map(int, s.torch.split("."))) >= (2, 13)),
    ],
    ids=["cpu-only-on-x86", "one-build-set", "no-xpu-before-2.13"],
)
def test_an_upstream_style_filter_keeps_what_upstream_would(tmp_path: Path, nix_filter: str, keep) -> None:
    kernel = _kernel(tmp_path, f"torchVersions = {nix_filter};")
    expected = _python_variants(kernel, keep)
    assert expected  # the filter keeps something, so the comparison says something
    assert _eval(kernel, "variants") == expected
    assert expected != _python_variants(kernel, lambda s: True)  # each filter drops something (cpu-only-on-x86: the cross-built aarch64 CPU variants)


def test_a_filter_that_edits_records_keeps_bundle_and_tvm_fields(tmp_path: Path) -> None:
    """`version // { ... }` keeps bundleBuild; a record written from scratch without it is not
    a bundle build (upstream's default)."""
    kernel = _kernel(
        tmp_path,
        'torchVersions = all: (builtins.filter (v: v ? cpu && v.torchVersion == "2.13") all)'
        ' ++ [ { torchVersion = "2.14"; cpu = true; systems = [ "x86_64-linux" ]; } ];',
    )
    table = {row["name"]: row["bundle"] for row in _eval(kernel, "variantTable")}
    assert table == {
        "torch213-cxx11-cpu-x86_64-linux": True,
        "torch214-cxx11-cpu-x86_64-linux": False,
        "torch213-cxx11-cpu-aarch64-linux": True,  # cross-built here (requests.targets of the lock)
    }


def test_an_unknown_argument_is_refused_naming_it(tmp_path: Path) -> None:
    kernel = _kernel(tmp_path, "torchVersion = _: [ ];")
    with pytest.raises(NixError) as caught:
        _eval(kernel, "variants")
    message = str(caught.value)
    assert "unknown argument torchVersion" in message
    assert "accepted: self, path, rev, torchVersions, pythonCheckInputs" in message


def test_a_bad_record_is_refused_naming_it(tmp_path: Path) -> None:
    kernel = _kernel(tmp_path, 'torchVersions = _: [ { torchVersion = "2.14"; systems = [ "x86_64-linux" ]; } ];')
    with pytest.raises(NixError, match="record 0 of its result: has no backend"):
        _eval(kernel, "variants")


def test_upstream_arguments_are_accepted(tmp_path: Path) -> None:
    """A flake passing every upstream argument evaluates; doGetKernelCheck = false reaches
    the variant derivation and its check."""
    kernel = _kernel(
        tmp_path,
        "doGetKernelCheck = false;\n"
        "pythonCheckInputs = pkgs: with pkgs; [ einops ];\n"
        "pythonNativeCheckInputs = pkgs: [ ];\n"
        f"torchVersions = {CPU_ONLY_ON_X86};",
    )
    assert _eval(kernel, "variants") == _python_variants(kernel, lambda s: s.backend.value != "cpu" or s.system == "x86_64-linux")
    drv = _eval(kernel, "redistributable.torch213-cxx11-cpu-x86_64-linux.noImportCheck")
    assert drv == "1"
    inputs = _eval(kernel, "testRuns.torch213-cxx11-cpu-x86_64-linux.checkInputs")
    assert inputs == ["pytest", "numpy", "kernels", "einops"]


def test_rev_without_self_is_the_upstream_deprecation(tmp_path: Path) -> None:
    kernel = copy_kernel("relu", tmp_path / "relu", git=False)
    text = (kernel / "flake.nix").read_text()
    (kernel / "flake.nix").write_text(text.replace("{ inherit self; path = ./.; }", '{ rev = "abc"; path = ./.; }'))
    with pytest.raises(NixError, match="`rev` argument of genKernelFlakeOutputs is deprecated"):
        _eval(kernel, "variants")


def test_an_unknown_check_input_names_itself(tmp_path: Path) -> None:
    """`with pkgs; [ x ]` for an x the pinned set lacks: Nix's own error names it; a value
    that is not a package of the set is refused with the set's names."""
    kernel = _kernel(tmp_path, "pythonCheckInputs = pkgs: with pkgs; [ notapinnedpackage ];")
    with pytest.raises(NixError, match="notapinnedpackage"):
        _eval(kernel, "testRuns.torch213-cxx11-cpu-x86_64-linux.checkInputs")
    other = _kernel(tmp_path / "b", 'pythonCheckInputs = pkgs: [ "einops" ];')
    with pytest.raises(NixError, match="not a package of the pinned kernel-test set .* the set holds: .*einops"):
        _eval(other, "testRuns.torch213-cxx11-cpu-x86_64-linux.checkInputs")


def test_no_tests_directory_means_no_test_runs(tmp_path: Path) -> None:
    kernel = copy_kernel("relu", tmp_path / "relu", git=False)
    for path in sorted((kernel / "tests").rglob("*"), reverse=True):
        path.unlink() if path.is_file() else path.rmdir()
    (kernel / "tests").rmdir()
    assert _eval(kernel, "testRuns") == {}
    checks = nix.eval_json(
        prepare_kernel_flake(kernel).installable(f"checks.{SYSTEM}"),
        flake_args=[*prepare_kernel_flake(kernel).flake_args, "--apply", "builtins.attrNames"],
    )
    assert not [name for name in checks if name.endswith("-tests")]


def test_kernel_test_outputs_are_listed(tmp_path: Path) -> None:
    kernel = copy_kernel("relu", tmp_path / "relu", git=False)
    prepared = prepare_kernel_flake(kernel)
    checks = nix.eval_json(prepared.installable(f"checks.{SYSTEM}"), flake_args=[*prepared.flake_args, "--apply", "builtins.attrNames"])
    runs = nix.eval_json(prepared.installable("testRuns"), flake_args=[*prepared.flake_args, "--apply", "builtins.attrNames"])
    assert runs and sorted(f"{name}-tests" for name in runs) == sorted(n for n in checks if n.endswith("-tests"))
    packages = _eval(kernel, "checkPackages")
    assert {"pytest", "numpy", "kernels", "einops"} <= set(packages)



@pytest.mark.parametrize(
    "inputs",
    [
        'inputs = {\n    self.submodules = true;\n    kernel-builder.url = "%s";\n  };',  # kernels-community's deep-gemm
        'inputs.self.submodules = true;\n  inputs.self.lfs = false;\n  inputs.kernel-builder.url = "%s";',
    ],
    ids=["inputs-block", "dotted"],
)
def test_self_fetch_attributes_of_newer_nix_are_dropped_from_the_copy(tmp_path: Path, inputs: str) -> None:
    """``self.submodules`` / ``self.lfs`` (Nix 2.27+) only say what a git source fetches; the
    copy Nix reads is a path: flake, so they are dropped from it, and the kernel evaluates.
    Nix 2.8 refuses the kernel's own flake.nix for them."""
    kernel = copy_kernel("relu", tmp_path / "relu", git=False)
    text = (kernel / "flake.nix").read_text()
    url = next(line for line in text.splitlines() if "kernel-builder.url" in line).split('"')[1]
    text = "\n".join(inputs % url if "kernel-builder.url" in line else line for line in text.splitlines()) + "\n"
    (kernel / "flake.nix").write_text(text)
    prepared = prepare_kernel_flake(kernel)
    assert _eval(kernel, "variants") == _python_variants(kernel, lambda s: True)
    assert (kernel / "flake.nix").read_text() == text  # the kernel's own file is left as it is
    with pytest.raises(NixError, match="unexpected flake input attribute '(submodules|lfs)'"):
        nix.eval_json(f"path:{kernel}#variants", flake_args=prepared.flake_args)


def test_headers_that_pyext_also_ships_stay_inputs_of_every_object(tmp_path: Path) -> None:
    """deep-gemm's pyext has "hpp" and "h" (its JIT reads them from the package): those
    headers are still every object's input, and only the package's .py files are not
    (editing them compiles nothing again). Before, every pyext match was dropped, so its
    csrc/impl.cu failed with `utils/torch_compat.hpp: No such file or directory`."""
    kernel = copy_kernel("relu", tmp_path / "relu", git=False)
    toml = kernel / "build.toml"
    toml.write_text(toml.read_text().replace("[torch]\n", '[torch]\npyext = ["py", "h"]\n', 1))
    (kernel / "torch-ext" / "relu" / "jit.h").write_text("// shipped in the package for a JIT\n")
    prepared = prepare_kernel_flake(kernel)
    found = nix.eval_json(
        prepared.installable("legacyPackages.x86_64-linux.redistributable.torch213-cxx11-cpu-x86_64-linux"),
        flake_args=[*prepared.flake_args, "--apply",
                    'd: let h = d.headers; in '
                    '{ ext = builtins.attrNames (builtins.readDir "${h}/torch-ext"); '
                    'pkg = builtins.attrNames (builtins.readDir "${h}/torch-ext/relu"); }'],
    )
    assert "torch_binding.h" in found["ext"]  # listed in [torch] src, and a pyext match
    assert found["pkg"] == ["jit.h"]  # the package's header stays; its __init__.py and layers.py do not


def test_every_object_sorts_before_every_link_and_variant(tmp_path: Path) -> None:
    """Nix starts ready derivations in name order (test_object_progress shows it), so the
    names alone make a build of several variants, of one kernel or several, compile every
    object before any link."""
    kernel = copy_kernel("relu", tmp_path / "relu", git=False)
    prepared = prepare_kernel_flake(kernel)
    names: dict[str, list[str]] = {"objects": [], "tails": []}
    variants = ["torch212-cxx11-cpu-x86_64-linux", "torch213-cxx11-cpu-x86_64-linux"]
    for variant in variants:
        found = nix.eval_json(
            prepared.installable(f"legacyPackages.x86_64-linux.redistributable.{variant}"),
            flake_args=[*prepared.flake_args, "--apply",
                        "d: { objects = map (o: o.name) d.objects; tails = [ d.link.name d.name ]; }"],
        )
        assert len(found["objects"]) == 2 and found["tails"] == [f"relu-{variant}-link", f"relu-{variant}"]
        names["objects"] += found["objects"]
        names["tails"] += found["tails"]
    assert max(n.encode() for n in names["objects"]) < min(n.encode() for n in names["tails"]), names
    # ... and before any other kernel's: kernel names start with a letter, and in a build of
    # several kernels relu's `relu-torch…-link` must not come before relu-twin's objects.
    assert max(n.encode() for n in names["objects"]) < b"a", names
    assert all(step_of(n, variants) for n in names["objects"]), names  # and kernel-builder still reads them


# --- issue 45 #22: each bad argument gets its own located message -----------------------


@pytest.mark.parametrize(
    ("extra", "expected"),
    [
        ("torchVersions = 5;", r"torchVersions must be a function, got an integer \(5\); e\.g\. torchVersions = all: builtins\.filter"),
        ('pythonCheckInputs = "einops";', r"pythonCheckInputs must be a function, got a string \(\"einops\"\); e\.g\. pythonCheckInputs = pkgs: with pkgs; \[ einops \]"),
        ('doGetKernelCheck = "false";', r"doGetKernelCheck must be true or false, got a string \(\"false\"\)"),
        ('system = "riscv64-linux";', r"system = \"riscv64-linux\" is not a system kernel-builder builds for; one of: aarch64-darwin, aarch64-linux, x86_64-linux"),
    ],
    ids=["torchVersions-not-a-function", "pythonCheckInputs-not-a-function", "doGetKernelCheck-string", "system-unknown"],
)
def test_a_bad_argument_value_is_named_with_what_it_should_be(tmp_path: Path, extra: str, expected: str) -> None:
    """Before: torchVersions = 5 showed the pythonCheckInputs example, doGetKernelCheck =
    "false" was a Nix type error inside variant.nix, an unknown system a missing attribute."""
    kernel = _kernel(tmp_path, extra)
    with pytest.raises(NixError, match=expected) as caught:
        _eval(kernel, "variants")
    assert "genKernelFlakeOutputs" in str(caught.value)
    assert "variant.nix" not in str(caught.value) and "missing" not in str(caught.value)


def test_a_flake_that_keeps_no_build_set_says_so(tmp_path: Path, state: Path) -> None:
    """``torchVersions = _: [ ]``: `build` claimed build sets "that would build it" (from
    build-sets.json, which the flake had just filtered away) and `--variant X` said "choose
    one of: " with nothing after it. Both now name the flake's torchVersions, as a
    configuration error (exit 3)."""
    import os

    from nix_support import kernel_builder

    kernel = _kernel(tmp_path, "torchVersions = _: [ ];")
    env = {**os.environ}
    for args in ([], ["--variant", "torch213-cxx11-cpu-x86_64-linux"]):
        done = kernel_builder("build", str(kernel), *args, env=env, check=False)
        assert done.returncode == 3, done.stderr
        assert "the kernel flake lists no variant at all" in done.stderr and "torchVersions" in done.stderr
        assert "would build it" not in done.stderr and "choose one of" not in done.stderr


def test_a_record_of_a_torch_version_no_build_set_has_is_not_said_to_be_published(tmp_path: Path) -> None:
    """A torchVersions record with torch "2.99": the variant is listed, unbuildable, and its
    reason no longer claims that torch 2.99 "is published on PyPI"."""
    from kernel_builder.flake.flake_build import open_kernel_flake

    kernel = _kernel(tmp_path, 'torchVersions = all: all ++ [ { torchVersion = "2.99"; cpu = true; systems = [ "x86_64-linux" ]; bundleBuild = true; } ];')
    table = {entry.name: entry for entry in open_kernel_flake(kernel).table}
    entry = table["torch299-cxx11-cpu-x86_64-linux"]
    assert not entry.buildable
    assert "published" not in entry.reason
    assert entry.reason.startswith("torch 2.99 is not a torch version kernel-builder knows (build-sets.json has ")
    assert "flake.nix" in entry.reason
    known = table["torch213-cxx11-cpu-x86_64-linux"]
    assert known.buildable  # the real ones are untouched
