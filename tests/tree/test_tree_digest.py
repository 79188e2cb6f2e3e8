"""Digests: equal to the reference's (kernels-data) on random trees; validation; `kernel-builder hash`."""

from __future__ import annotations

import json
import subprocess
import sys
import tempfile
from pathlib import Path

import kernels_data  # reference digest (test-only oracle)
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from kernel_builder.tree.digest import Digest, compute_digest, is_excluded, validate_digest
from kernel_builder.errors import CheckError
from kernel_builder.tree.layout import discover_variants, hash_tree
from kernel_builder.tree.metadata import Metadata, MetadataBackend

ALG = {"sha256": kernels_data.DigestAlgorithm.SHA256, "sha512": kernels_data.DigestAlgorithm.SHA512}

segment = st.one_of(
    st.from_regex(r"[A-Za-z0-9_][A-Za-z0-9_.+ -]{0,11}", fullmatch=True).filter(lambda s: s not in (".", "..")),
    st.sampled_from(["__pycache__", "metadata.json", "metadata.json.sigstore", "x.pyc", "__init__.py", "_ops.py"]),
)
relpaths = st.lists(segment, min_size=1, max_size=4).map("/".join)
trees = st.dictionaries(relpaths, st.binary(max_size=300), max_size=15)


def _materialize(root: Path, files: dict[str, bytes]) -> dict[str, bytes]:
    """Write ``files`` under ``root``, skipping paths that clash with an earlier file/dir."""
    written: dict[str, bytes] = {}
    for rel, data in files.items():
        path = root / rel
        try:
            path.parent.mkdir(parents=True, exist_ok=True)
            if path.is_dir():
                continue
            path.write_bytes(data)
        except (NotADirectoryError, FileExistsError, IsADirectoryError):
            continue
        written[rel] = data
    return written


def _reference(path: Path, algorithm: str = "sha256") -> Digest:
    ref = kernels_data.Digest.hash_variant(ALG[algorithm], str(path))
    return Digest(algorithm, dict(ref.files))


class TestComputeDigest:
    @given(files=trees, algorithm=st.sampled_from(["sha256", "sha512"]))
    @settings(max_examples=120, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
    def test_equals_reference_on_random_trees(self, files: dict[str, bytes], algorithm: str) -> None:
        with tempfile.TemporaryDirectory() as tmp:
            root = Path(tmp) / "variant"
            root.mkdir()
            written = _materialize(root, files)
            ours = compute_digest(root, algorithm)
            assert ours == _reference(root, algorithm)
            assert set(ours.files) == {rel for rel in written if not is_excluded(rel)}
            assert list(ours.files) == sorted(ours.files)

    def test_exclusions_and_links(self, tmp_path: Path) -> None:
        root = tmp_path / "v"
        (root / "sub" / "__pycache__").mkdir(parents=True)
        (root / "pkg").mkdir()
        for rel in ["__init__.py", "metadata.json", "metadata.json.sigstore", "sub/metadata.json", "sub/__pycache__/m.py", "x.pyc", "pkg/y.py"]:
            (root / rel).write_text(rel)
        (root / "link.py").symlink_to("__init__.py")
        (root / "dirlink").symlink_to("pkg")
        ours = compute_digest(root)
        assert list(ours.files) == ["__init__.py", "link.py", "pkg/y.py", "sub/metadata.json"]
        assert ours == _reference(root)
        assert ours.files["link.py"] == ours.files["__init__.py"]

    def test_dangling_link_is_an_error(self, tmp_path: Path) -> None:
        (tmp_path / "broken.py").symlink_to("nowhere.py")
        with pytest.raises(CheckError, match=r"broken.py is a symlink to nowhere.py, which does not exist \(a dangling link\)"):
            compute_digest(tmp_path)
        with pytest.raises(OSError):
            kernels_data.Digest.hash_variant(ALG["sha256"], str(tmp_path))

    def test_not_a_directory(self, tmp_path: Path) -> None:
        with pytest.raises(CheckError, match="not a directory"):
            compute_digest(tmp_path / "nope")


class TestValidateDigest:
    def test_violations_match_reference(self, tmp_path: Path) -> None:
        root = tmp_path / "v"
        (root / "b").mkdir(parents=True)
        for rel in ["a.py", "b/x.py", "z.py", "m.py"]:
            (root / rel).write_text(rel)
        expected = compute_digest(root)
        ref_expected = kernels_data.Digest.hash_variant(ALG["sha256"], str(root))
        assert validate_digest(root, expected) == []
        (root / "b" / "x.py").unlink()
        (root / "a.py").write_text("changed")
        (root / "z.py").write_text("changed")
        (root / "new.py").write_text("n")
        (root / "aa.py").write_text("n")
        ours = validate_digest(root, expected)
        with pytest.raises(kernels_data.DigestValidationError) as info:
            ref_expected.validate(kernels_data.Digest.hash_variant(ALG["sha256"], str(root)))
        assert ours == [str(v) for v in info.value.violations]
        assert ours[0].startswith("File hash mismatch for a.py: expected: ")
        assert "Missing file: b/x.py" in ours and ours[-2:] == ["Unknown file: aa.py", "Unknown file: new.py"]

    def test_sha512(self, tmp_path: Path) -> None:
        (tmp_path / "a.py").write_text("a")
        digest = compute_digest(tmp_path, "sha512")
        assert len(digest.files["a.py"]) == 88
        assert validate_digest(tmp_path, digest) == []

    def test_digest_json(self) -> None:
        with pytest.raises(ValueError, match="md5"):
            Digest.from_json({"algorithm": "md5", "files": {}})
        with pytest.raises(ValueError):
            Digest("sha1", {})
        assert Digest.from_json({"algorithm": "sha256", "files": {"b": "x", "a": "y"}}).to_json() == {
            "algorithm": "sha256",
            "files": {"a": "y", "b": "x"},
        }


def _variant(root: Path, name: str) -> Path:
    v = root / name
    v.mkdir(parents=True)
    (v / "__init__.py").write_text(f"# {name}\n")
    (v / "_ops.py").write_text("ops = None\n")
    Metadata(name="relu", id="_relu_cpu_1", version=1, license="MIT", backend=MetadataBackend("cpu")).write(v / "metadata.json")
    return v


class TestLayoutAndHashTree:
    def test_discovery_order(self, tmp_path: Path) -> None:
        _variant(tmp_path, "torch-cpu")
        assert discover_variants(tmp_path) == (tmp_path, [tmp_path / "torch-cpu"])
        _variant(tmp_path / "build", "torch-cuda")
        _variant(tmp_path / "build", "torch-cpu")
        (tmp_path / "build" / "benchmarks").mkdir()  # the one sub-directory that is not a variant
        assert discover_variants(tmp_path) == (tmp_path / "build", [tmp_path / "build" / "torch-cpu", tmp_path / "build" / "torch-cuda"])
        (tmp_path / "build" / "not-a-variant").mkdir()  # refused, never silently left out
        with pytest.raises(CheckError, match=r"not-a-variant/ has no metadata.json"):
            discover_variants(tmp_path)
        (tmp_path / "build" / "not-a-variant").rmdir()
        _variant(tmp_path / "result", "torch-xpu")
        assert discover_variants(tmp_path)[0] == tmp_path / "result"

    def test_nothing_found(self, tmp_path: Path) -> None:
        with pytest.raises(CheckError, match="no built variants found"):
            discover_variants(tmp_path)

    def test_hash_tree_writes_reference_digests(self, tmp_path: Path) -> None:
        a = _variant(tmp_path / "build", "torch213-cxx11-cpu-x86_64-linux")
        b = _variant(tmp_path / "build", "torch-cpu")
        (a / "__pycache__").mkdir()
        (a / "__pycache__" / "x.cpython-311.pyc").write_bytes(b"\0")
        assert hash_tree(tmp_path) == [b, a]
        for v in (a, b):
            md = Metadata.read(v / "metadata.json")
            assert md.digest == _reference(v)
            ref = kernels_data.Metadata.read_from_file(str(v / "metadata.json"))
            ref.digest.validate(kernels_data.Digest.hash_variant(ALG["sha256"], str(v)))  # raises on mismatch
        # hashing again is stable, and the file has no temporary siblings left
        before = (a / "metadata.json").read_bytes()
        hash_tree(tmp_path)
        assert (a / "metadata.json").read_bytes() == before
        assert sorted(p.name for p in a.iterdir()) == ["__init__.py", "__pycache__", "_ops.py", "metadata.json"]

    def test_hash_tree_write_is_atomic(self, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
        """A write that fails before the rename leaves the old metadata.json intact and no temporary file."""
        import kernel_builder.tree.metadata as metadata_mod

        v = _variant(tmp_path / "build", "torch-cpu")
        before = (v / "metadata.json").read_bytes()
        names = sorted(p.name for p in v.iterdir())

        def no_rename(src: object, dst: object) -> None:
            raise OSError(28, "No space left on device")

        monkeypatch.setattr(metadata_mod.os, "replace", no_rename)
        with pytest.raises(CheckError, match="cannot write .*metadata.json: No space left on device"):
            hash_tree(tmp_path)
        assert (v / "metadata.json").read_bytes() == before
        assert sorted(p.name for p in v.iterdir()) == names


class TestHashCommand:
    def _run(self, *args: str, cwd: Path) -> subprocess.CompletedProcess:
        return subprocess.run([sys.executable, "-m", "kernel_builder", *args], cwd=cwd, capture_output=True, text=True)

    def test_hash_command(self, tmp_path: Path) -> None:
        v = _variant(tmp_path / "build", "torch-cpu")
        done = self._run("hash", str(tmp_path), cwd=tmp_path)
        assert done.returncode == 0, done.stderr
        assert done.stdout.strip() == str(tmp_path / "build" / "torch-cpu")
        assert "hashed 1 variant(s)" in done.stderr
        data = json.loads((v / "metadata.json").read_text())
        assert data["digest"] == _reference(v).to_json()
        # default directory is the current one
        (v / "_ops.py").write_text("changed\n")
        assert self._run("hash", cwd=tmp_path).returncode == 0
        assert Metadata.read(v / "metadata.json").digest == _reference(v)

    def test_check_json_reports_failing_variants(self, tmp_path: Path) -> None:
        """`check --json` prints an object for every variant, failing ones with "ok": false and
        their errors, then exits 8 (check) naming the failure on stderr."""
        for name in ("torch-cpu", "torch-cuda"):
            v = _variant(tmp_path / "build", name)
            if name == "torch-cuda":
                meta = json.loads((v / "metadata.json").read_text())
                meta["backend"] = {"type": "cuda"}
                (v / "metadata.json").write_text(json.dumps(meta))
        assert self._run("hash", str(tmp_path), cwd=tmp_path).returncode == 0
        (tmp_path / "build" / "torch-cuda" / "_ops.py").write_text("# edited after hashing\n")
        done = self._run("check", "--json", "--no-import", str(tmp_path), cwd=tmp_path)
        assert done.returncode == 8, done.stderr
        reports = {r["variant"]: r for r in map(json.loads, done.stdout.splitlines())}
        assert reports["torch-cpu"]["ok"] is True and reports["torch-cpu"]["errors"] == []
        assert reports["torch-cuda"]["ok"] is False
        assert any("_ops.py" in e for e in reports["torch-cuda"]["errors"])
        assert "variant torch-cuda failed" in done.stderr and "torch-cpu failed" not in done.stderr
        human = self._run("check", "--no-import", str(tmp_path), cwd=tmp_path)
        assert human.returncode == 8 and human.stdout.splitlines() == ["ok torch-cpu", "FAILED torch-cuda"]

    def test_check_tree_returns_failures(self, tmp_path: Path) -> None:
        from kernel_builder.tree.checks import check_tree, failed_tree_error

        _variant(tmp_path / "build", "torch-cpu")
        reports = check_tree(tmp_path)  # no digest: a failure, returned rather than raised
        assert [(r.variant, r.ok) for r in reports] == [("torch-cpu", False)]
        assert any("no digest" in e for e in reports[0].errors)
        error = failed_tree_error(reports)
        assert error is not None and error.exit_code == 8 and "no digest" in error.message

    def test_hash_command_without_variants(self, tmp_path: Path) -> None:
        done = self._run("hash", str(tmp_path), cwd=tmp_path)
        assert done.returncode == 8
        assert "no built variants found" in done.stderr and "hint:" in done.stderr

    def test_hash_command_bad_metadata(self, tmp_path: Path) -> None:
        v = tmp_path / "build" / "torch-cpu"
        v.mkdir(parents=True)
        (v / "metadata.json").write_text('{"name": "relu"}')
        done = self._run("hash", str(tmp_path), cwd=tmp_path)
        assert done.returncode == 8
        assert "metadata.json" in done.stderr and "missing key `id`" in done.stderr

    @pytest.mark.parametrize("indent", [2, 4, None])
    def test_hash_command_keeps_every_other_byte(self, tmp_path: Path, indent: int | None) -> None:
        """Unknown keys (``kernels-minver``, ``x-...``), their order, spelling of numbers and the
        file's layout survive ``hash``: only the ``digest`` value changes."""
        v = _variant(tmp_path / "build", "torch-cpu")
        data = json.loads((v / "metadata.json").read_text())
        data.pop("digest", None)
        data = {"x-first": {"n": 1.50, "e": 1E3, "s": "\u00e9\u2603"}, **data, "kernels-minver": "0.17.0"}
        data["x-tool"] = [1, {"nested": None}, "trailing"]
        data["digest"] = {"algorithm": "sha256", "files": {"stale.py": "AAAA"}}
        text = json.dumps(data, indent=indent, ensure_ascii=False)
        text = text.replace("1.5", "1.50").replace("1000.0", "1E3")  # spellings a JSON dump would not produce
        (v / "metadata.json").write_text(text, encoding="utf-8")

        done = self._run("hash", str(tmp_path), cwd=tmp_path)
        assert done.returncode == 0, done.stderr
        after = (v / "metadata.json").read_text(encoding="utf-8")
        new_digest = _reference(v).to_json()
        assert json.loads(after)["digest"] == new_digest
        # Put the old digest back in the new text: the file is then byte-for-byte the input.
        old_value = json.dumps(data["digest"], indent=indent, ensure_ascii=False)
        new_value = json.dumps(new_digest, indent=indent, ensure_ascii=False)
        if indent:
            old_value, new_value = (x.replace("\n", "\n" + " " * indent) for x in (old_value, new_value))
        assert after.count(new_value) == 1
        assert after.replace(new_value, old_value) == text
        # the reference reads the result, and kernels-minver with it
        import kernels

        assert str(kernels.Metadata.read_from_file(v / "metadata.json").kernels_minver) == "0.17.0"

    def test_hash_command_adds_a_missing_digest_and_keeps_the_rest(self, tmp_path: Path) -> None:
        v = _variant(tmp_path / "build", "torch-cpu")
        data = json.loads((v / "metadata.json").read_text())
        data.pop("digest", None)
        data["x-note"] = "kept"
        text = json.dumps(data, indent=2) + "\n"
        (v / "metadata.json").write_text(text)
        assert self._run("hash", str(tmp_path), cwd=tmp_path).returncode == 0
        after = json.loads((v / "metadata.json").read_text())
        assert after.pop("digest") == _reference(v).to_json()
        assert after == data and list(after) == list(data)
