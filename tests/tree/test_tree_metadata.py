"""metadata.json: our writer, our reader, and the reference readers (kernels-data, kernels._rust)."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import attrs
import kernels._rust as rust_ref  # newer reference bindings: provenance and kernel-depends
import kernels_data  # reference metadata reader (test-only oracle)
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from kernel_builder.config import loads
from kernel_builder.config.model import Backend, KernelDependency, TpuGeneral
from kernel_builder.tree.digest import Digest
from kernel_builder.errors import ConfigError
from kernel_builder.tree.metadata import (
    BuilderProvenance,
    GitStatus,
    Metadata,
    MetadataBackend,
    MetadataError,
    Provenance,
    current_provenance,
    git_status,
)

HEX = "0123456789abcdef"
KEY_ORDER = ["name", "id", "version", "license", "upstream", "source", "python-depends", "kernel-depends", "backend", "digest", "provenance"]


def _toml(framework: str, extra_general: str = "", backends: str = '["cpu", "cuda", "rocm", "xpu", "neuron", "metal"]') -> str:
    return f"""
[general]
name = "act-fn"
version = 3
edition = 5
license = "Apache-2.0"
backends = {backends}
upstream = "https://github.com/example/act.git"
source = "git@github.com:example/act-kb.git"
python-depends = ["einops"]
kernel-depends = [{{ repo-id = "org/common", version = 2 }}]
{extra_general}

[general.cuda]
python-depends = ["nvidia-cutlass-dsl"]
kernel-depends = [{{ repo-id = "org/cuda-dep", revision = "abc123" }}]

[general.xpu]
python-depends = ["onednn"]

[general.neuron]
python-depends = ["nki"]

{framework}
"""


NOARCH = '[torch-noarch]\ncuda-capabilities = ["9.0", "10.0"]\nrocm-archs = ["gfx942"]\n'
ARCH = '[torch]\nsrc = ["torch-ext/b.cpp"]\n\n[kernel.k]\nbackend = "cuda"\ndepends = ["torch"]\nsrc = ["k.cu"]\n'


def _read_with_references(path: Path) -> dict:
    ref = kernels_data.Metadata.read_from_file(str(path))
    rust = rust_ref.Metadata.read_from_file(str(path))
    out = {
        "name": str(ref.name),
        "id": ref.id,
        "version": ref.version,
        "license": ref.license,
        "upstream": ref.upstream,
        "source": ref.source,
        "python_depends": list(ref.python_depends),
        "backend": str(ref.backend.backend_type).rsplit(".", 1)[-1].lower(),
        "archs": None if ref.backend.archs is None else list(ref.backend.archs),
        "digest": None if ref.digest is None else (str(ref.digest.algorithm).rsplit(".", 1)[-1].lower(), dict(ref.digest.files)),
        "kernel_depends": [
            (d.repo_id, getattr(d.version, "version", None), getattr(d.version, "revision", None)) for d in rust.kernel_depends
        ],
        "provenance": None,
    }
    if rust.provenance is not None:
        p = rust.provenance
        kb = p.kernel_builder
        out["provenance"] = (
            kb.version,
            # kernels 0.19.1 gives commits as Oid values; str() is the hex text
            None if kb.git is None else (str(kb.git.commit), kb.git.dirty),
            None if p.kernel is None else (str(p.kernel.commit), p.kernel.dirty),
        )
    return out


def _ours(md: Metadata, normalized_url) -> dict:
    p = md.provenance
    return {
        "name": md.name,
        "id": md.id,
        "version": md.version,
        "license": md.license,
        "upstream": normalized_url(md.upstream),
        "source": normalized_url(md.source),
        "python_depends": list(md.python_depends),
        "backend": md.backend.type.value,
        "archs": None if md.backend.archs is None else list(md.backend.archs),
        "digest": None if md.digest is None else (md.digest.algorithm, dict(md.digest.files)),
        "kernel_depends": [(d.repo_id, d.version, d.revision) for d in md.kernel_depends],
        "provenance": None
        if p is None
        else (
            p.kernel_builder.version,
            None if p.kernel_builder.git is None else (p.kernel_builder.git.commit, p.kernel_builder.git.dirty),
            None if p.kernel is None else (p.kernel.commit, p.kernel.dirty),
        ),
    }


def _normalize(url: str | None) -> str | None:
    """The reference shows SCP-like URLs as ssh://user@host/path."""
    if url is None or "://" in url:
        return url
    user_host, path = url.split(":", 1)
    return f"ssh://{user_host}/{path}"


class TestForBackend:
    def test_noarch_archs_and_depends(self) -> None:
        build = loads(_toml(NOARCH))
        cuda = Metadata.for_backend(build, "_act_fn_cuda_abc1234", Backend.CUDA)
        assert cuda.backend == MetadataBackend(Backend.CUDA, ("9.0", "10.0"))
        assert cuda.python_depends == ("einops", "nvidia-cutlass-dsl")
        assert cuda.kernel_depends == (KernelDependency("org/common", version=2), KernelDependency("org/cuda-dep", revision="abc123"))
        assert (cuda.name, cuda.id, cuda.version, cuda.license) == ("act-fn", "_act_fn_cuda_abc1234", 3, "Apache-2.0")
        assert cuda.upstream == "https://github.com/example/act.git"
        assert cuda.source == "git@github.com:example/act-kb.git"
        rocm = Metadata.for_backend(build, "_act_fn_rocm_abc1234", "rocm")
        assert rocm.backend.archs == ("gfx942",) and rocm.python_depends == ("einops",)
        cpu = Metadata.for_backend(build, "_act_fn_cpu_abc1234", Backend.CPU)
        assert cpu.backend.archs is None and cpu.to_json()["backend"] == {"type": "cpu"}
        assert cpu.kernel_depends == (KernelDependency("org/common", version=2),)
        xpu = Metadata.for_backend(build, "x", Backend.XPU)
        assert xpu.python_depends == ("einops", "onednn")
        neuron = Metadata.for_backend(build, "x", Backend.NEURON)
        assert neuron.python_depends == ("einops", "nki")  # deliberate: the reference drops neuron's names

    def test_compiled_kernels_have_no_archs_until_built(self) -> None:
        build = loads(_toml(ARCH))
        md = Metadata.for_backend(build, "_act_fn_cuda_1", Backend.CUDA)
        assert md.backend.archs is None
        assert md.with_archs(["10.0", "7.5"]).backend.archs == ("10.0", "7.5")

    def test_unknown_python_dependency(self) -> None:
        # The config reader rejects these too; build the model directly to reach for_backend.
        build = loads(_toml(NOARCH))
        general = attrs.evolve(build.general, python_depends=("numpy",))
        with pytest.raises(ConfigError, match="numpy"):
            Metadata.for_backend(attrs.evolve(build, general=general), "x", Backend.CPU)
        tpu = attrs.evolve(build.general, tpu=TpuGeneral(python_depends=("einops",)))
        with pytest.raises(ConfigError, match="tpu"):
            Metadata.for_backend(attrs.evolve(build, general=tpu), "x", Backend.TPU)

    def test_provenance_from_git(self, tmp_path: Path) -> None:
        repo = tmp_path / "k"
        repo.mkdir()
        git = ["git", "-C", str(repo), "-c", "user.email=a@b", "-c", "user.name=a"]
        subprocess.run([*git, "init", "-q"], check=True)
        (repo / "f.txt").write_text("1")
        subprocess.run([*git, "add", "f.txt"], check=True)
        subprocess.run([*git, "commit", "-q", "-m", "x"], check=True)
        head = subprocess.run([*git, "rev-parse", "HEAD"], check=True, capture_output=True, text=True).stdout.strip()
        assert git_status(repo) == GitStatus(head, False)
        (repo / "untracked.txt").write_text("u")
        assert git_status(repo) == GitStatus(head, False)
        (repo / "f.txt").write_text("2")
        assert git_status(repo) == GitStatus(head, True)
        assert git_status(tmp_path) is None
        prov = current_provenance(repo)
        assert prov.kernel == GitStatus(head, True) and prov.dirty
        from kernel_builder import __version__

        assert prov.kernel_builder.version == __version__


class TestFile:
    @pytest.mark.parametrize("framework", [NOARCH, ARCH])
    @pytest.mark.parametrize("backend", [Backend.CPU, Backend.CUDA, Backend.ROCM, Backend.XPU, Backend.METAL])
    def test_reference_reads_what_we_write(self, tmp_path: Path, framework: str, backend: Backend) -> None:
        build = loads(_toml(framework))
        prov = Provenance(BuilderProvenance("0.1.0", GitStatus("a" * 40, False)), GitStatus("B" * 64, True))
        md = Metadata.for_backend(build, f"_act_fn_{backend.value}_abc", backend, provenance=prov)
        md = md.with_digest(Digest("sha256", {"z.py": "AAAA", "a/b.py": "BBBB"}))
        path = tmp_path / "metadata.json"
        md.write(path)
        assert _read_with_references(path) == _ours(md, _normalize)
        assert Metadata.read(path) == md
        assert list(json.loads(path.read_text())) == [k for k in KEY_ORDER if k in md.to_json()]
        text = path.read_text()
        assert text == json.dumps(json.loads(text), indent=2) + "\n"
        assert list(json.loads(text)["digest"]["files"]) == ["a/b.py", "z.py"]

    def test_minimal_file_key_order(self, tmp_path: Path) -> None:
        md = Metadata(name="relu", id="_relu_cpu_1", version=1, license="MIT", backend=MetadataBackend("cpu"))
        md.write(tmp_path / "metadata.json")
        assert json.loads((tmp_path / "metadata.json").read_text()) == {
            "name": "relu",
            "id": "_relu_cpu_1",
            "version": 1,
            "license": "MIT",
            "python-depends": [],
            "kernel-depends": [],
            "backend": {"type": "cpu"},
        }
        assert [p.name for p in tmp_path.iterdir()] == ["metadata.json"]  # no temporary file left

    @given(
        name=st.from_regex(r"[a-z][-a-z0-9]{0,10}[a-z0-9]", fullmatch=True),
        version=st.integers(0, 2**31),
        license=st.text(min_size=1, max_size=20),
        depends=st.lists(st.sampled_from(["einops", "helion", "tvm-ffi"]), max_size=3),
        backend=st.sampled_from(["cpu", "cuda", "rocm", "xpu", "metal", "neuron", "cann"]),
        archs=st.none() | st.lists(st.text(alphabet="0123456789.+PTXagfx", min_size=1, max_size=6), max_size=4),
        files=st.dictionaries(st.from_regex(r"[a-z_]{1,6}(/[a-z_]{1,6})?\.py", fullmatch=True), st.just("c2hhMjU2"), max_size=4),
        kdeps=st.lists(
            st.one_of(
                st.builds(lambda r, v: KernelDependency(r, version=v), st.just("org/x"), st.integers(0, 9)),
                st.builds(lambda r, v: KernelDependency(r, revision=v), st.just("org/y"), st.text(alphabet=HEX, min_size=1, max_size=8)),
            ),
            max_size=3,
        ),
        commit=st.none() | st.text(alphabet=HEX, min_size=40, max_size=40),
    )
    @settings(max_examples=60, suppress_health_check=[HealthCheck.function_scoped_fixture], deadline=None)
    def test_random_metadata_round_trips_through_the_references(
        self, tmp_path: Path, name, version, license, depends, backend, archs, files, kdeps, commit
    ) -> None:
        prov = None if commit is None else Provenance(BuilderProvenance("9.9"), GitStatus(commit, True))
        md = Metadata(
            name=name,
            id=f"_{name.replace('-', '_')}_{backend}_x",
            version=version,
            license=license,
            python_depends=depends,
            kernel_depends=kdeps,
            backend=MetadataBackend(backend, archs),
            digest=Digest("sha512", files) if files else None,
            provenance=prov,
        )
        path = tmp_path / "metadata.json"
        md.write(path)
        assert _read_with_references(path) == _ours(md, _normalize)
        assert Metadata.read(path) == md


BASE = {"name": "relu", "id": "_relu_cpu_abc", "version": 1, "license": "MIT", "python-depends": [], "backend": {"type": "cpu"}}

# (label, change) -- each applied to BASE; the reference (kernels._rust) decides ok/error.
CASES = [
    ("plain", {}),
    ("unknown top-level key", {"frobnicate": 1}),
    ("unknown backend key", {"backend": {"type": "cpu", "extra": True}}),
    ("upstream not a url", {"upstream": "not a url"}),
    ("upstream scp", {"upstream": "git@github.com:a/b"}),
    ("bad name", {"name": "Relu"}),
    ("negative version", {"version": -1}),
    ("string version", {"version": "1"}),
    ("bool version", {"version": True}),
    ("int license", {"license": 3}),
    ("python-depends missing", {"python-depends": None}),
    ("python-depends not list", {"python-depends": "einops"}),
    ("python-depends int", {"python-depends": [1]}),
    ("backend unknown", {"backend": {"type": "gpu"}}),
    ("backend missing type", {"backend": {}}),
    ("archs not list", {"backend": {"type": "cuda", "archs": "9.0"}}),
    ("archs empty", {"backend": {"type": "cuda", "archs": []}}),
    ("kernel dep ok", {"kernel-depends": [{"repo-id": "a/b", "version": 1}]}),
    ("kernel dep both", {"kernel-depends": [{"repo-id": "a/b", "version": 1, "revision": "x"}]}),
    ("kernel dep neither", {"kernel-depends": [{"repo-id": "a/b"}]}),
    ("kernel dep extra", {"kernel-depends": [{"repo-id": "a/b", "version": 1, "x": 1}]}),
    ("kernel dep str version", {"kernel-depends": [{"repo-id": "a/b", "version": "1"}]}),
    ("digest ok", {"digest": {"algorithm": "sha512", "files": {"a.py": "AAAA"}}}),
    ("digest md5", {"digest": {"algorithm": "md5", "files": {}}}),
    ("digest upper", {"digest": {"algorithm": "SHA256", "files": {}}}),
    ("digest files not map", {"digest": {"algorithm": "sha256", "files": []}}),
    ("provenance minimal", {"provenance": {"kernel-builder": {"version": "0.1"}}}),
    ("provenance full", {"provenance": {"kernel-builder": {"version": "0.1", "commit": "a" * 40, "dirty": False}, "kernel": {"commit": "A" * 64, "dirty": True}}}),
    ("provenance sha alias", {"provenance": {"kernel-builder": {"version": "0.1", "sha": "a" * 40, "dirty": False}}}),
    ("provenance commit without dirty", {"provenance": {"kernel-builder": {"version": "0.1", "commit": "a" * 40}}}),
    ("provenance bad oid", {"provenance": {"kernel-builder": {"version": "0.1", "commit": "a" * 39, "dirty": False}}}),
    ("provenance no builder", {"provenance": {}}),
    ("provenance kernel without commit", {"provenance": {"kernel-builder": {"version": "0.1"}, "kernel": {"dirty": True}}}),
    ("null upstream", {"upstream": None}),
]


class TestReaderAgreesWithReference:
    @pytest.mark.parametrize(("label", "change"), CASES, ids=[c[0] for c in CASES])
    def test_case(self, tmp_path: Path, label: str, change: dict) -> None:
        data = dict(BASE)
        for key, value in change.items():
            if value is None and key == "python-depends":
                data.pop(key)
            else:
                data[key] = value
        path = tmp_path / "metadata.json"
        path.write_text(json.dumps(data))
        try:
            ref = rust_ref.Metadata.read_from_file(str(path))
            # 0.19.1 reads an unknown backend type as `Unknown` (a kernel for a newer
            # `kernels`); our reader names the bad key instead (check and upload must).
            reference_ok = not str(ref.backend.backend_type).endswith("Unknown")
        except Exception:
            reference_ok = False
        if reference_ok:
            md = Metadata.read(path)
            assert md.name == data["name"]
        else:
            with pytest.raises(MetadataError) as info:
                Metadata.read(path)
            assert str(path) in str(info.value)

    def test_not_json(self, tmp_path: Path) -> None:
        path = tmp_path / "metadata.json"
        path.write_text("{")
        with pytest.raises(MetadataError, match="not valid JSON"):
            Metadata.read(path)
        with pytest.raises(MetadataError, match="cannot read"):
            Metadata.read(tmp_path / "missing.json")

    def test_error_names_the_key(self, tmp_path: Path) -> None:
        path = tmp_path / "metadata.json"
        path.write_text(json.dumps({**BASE, "version": "one"}))
        with pytest.raises(MetadataError, match="`version` must be a non-negative integer"):
            Metadata.read(path)
