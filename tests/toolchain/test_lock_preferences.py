"""`toolchain lock` keeps the wheel versions the lock pins where the requests allow them.

pip resolves against a local index (`PIP_NO_INDEX`, `PIP_FIND_LINKS`) of small pure wheels:
alpha 1.0 and 1.1, beta (needs any alpha) and gamma (needs alpha >= 1.1), so each case is
a real `pip install --dry-run --report`, as `toolchain lock` runs it.
"""

from __future__ import annotations

import base64
import hashlib
import zipfile
from pathlib import Path

import pytest

from kernel_builder.errors import ConfigError
from kernel_builder.toolchain.pinned.locking import resolve_wheels, wheel_preferences
from kernel_builder.toolchain.pinned.lockfile import load_lock

LOCK = Path(__file__).resolve().parents[2] / "nix" / "toolchain-lock.json"


def pure_wheel(directory: Path, name: str, version: str, requires: tuple[str, ...] = ()) -> None:
    dist = f"{name}-{version}.dist-info"
    files = {
        f"{name}/__init__.py": f'__version__ = "{version}"\n',
        f"{dist}/METADATA": f"Metadata-Version: 2.1\nName: {name}\nVersion: {version}\n"
                            + "".join(f"Requires-Dist: {r}\n" for r in requires),
        f"{dist}/WHEEL": "Wheel-Version: 1.0\nGenerator: kernel-builder-tests\nRoot-Is-Purelib: true\nTag: py3-none-any\n",
    }
    record = []
    for path, text in files.items():
        digest = base64.urlsafe_b64encode(hashlib.sha256(text.encode()).digest()).rstrip(b"=").decode()
        record.append(f"{path},sha256={digest},{len(text.encode())}")
    files[f"{dist}/RECORD"] = "\n".join([*record, f"{dist}/RECORD,,"]) + "\n"
    with zipfile.ZipFile(directory / f"{name}-{version}-py3-none-any.whl", "w") as archive:
        for path, text in files.items():
            archive.writestr(zipfile.ZipInfo(path, (2020, 1, 1, 0, 0, 0)), text)


@pytest.fixture
def index(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    for version in ("1.0", "1.1"):
        pure_wheel(tmp_path, "alpha", version)
    pure_wheel(tmp_path, "beta", "1.0", ("alpha",))
    pure_wheel(tmp_path, "gamma", "1.0", ("alpha>=1.1",))
    monkeypatch.setenv("PIP_NO_INDEX", "1")
    monkeypatch.setenv("PIP_FIND_LINKS", str(tmp_path))
    return tmp_path


def versions(requirements: list[str], prefer: dict[str, str] | None = None) -> dict[str, str]:
    return {w["name"]: w["version"] for w in resolve_wheels(requirements, prefer=prefer)}


def test_a_pinned_version_is_kept_where_the_requests_allow_it(index: Path) -> None:
    assert versions(["beta"]) == {"alpha": "1.1", "beta": "1.0"}  # the newest, without the lock's pins
    assert versions(["beta"], {"alpha": "1.0"}) == {"alpha": "1.0", "beta": "1.0"}
    assert versions(["alpha"], {"alpha": "1.0"}) == {"alpha": "1.0"}  # a name without a version keeps its pin


def test_a_request_that_needs_another_version_gets_it_and_the_rest_stay(index: Path) -> None:
    assert versions(["gamma"], {"alpha": "1.0"}) == {"alpha": "1.1", "gamma": "1.0"}
    assert versions(["alpha==1.1", "beta"], {"alpha": "1.0", "beta": "1.0"}) == {"alpha": "1.1", "beta": "1.0"}


def test_a_pinned_version_the_index_lacks_is_dropped(index: Path) -> None:
    assert versions(["beta"], {"alpha": "0.9", "beta": "1.0"}) == {"alpha": "1.1", "beta": "1.0"}


def test_requests_that_cannot_be_met_are_an_error_naming_them(index: Path) -> None:
    with pytest.raises(ConfigError, match=r"(?s)failed for alpha==3\.0 \(x86_64\):.*No matching distribution found for alpha==3\.0") as caught:
        resolve_wheels(["alpha==3.0"], prefer={"beta": "1.0"})
    assert caught.value.exit_code != 0


def test_preferences_are_the_groups_own_pins_then_the_locks_single_versions() -> None:
    lock = load_lock(LOCK)
    own = wheel_preferences(lock, "env:torch2.12")
    for key in lock.groups["env:torch2.12"]:
        artifact = lock.artifacts[key]
        assert own[artifact.name.lower().replace("_", "-")] == artifact.version
    assert own["setuptools"] == "81.0.0"  # torch 2.12 needs setuptools < 82; the lock also pins 84.2.1 elsewhere
    new = wheel_preferences(lock, "env:a-new-environment")
    kernels = {a.version for a in lock.artifacts.values() if a.name == "kernels"}
    assert len(kernels) == 1 and new["kernels"] == kernels.pop()
    assert "setuptools" not in new and "torch" not in new  # several versions pinned: the request decides


def test_a_machines_pip_constraint_does_not_cap_the_lock(index: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    # As /etc/xdg/pip/pip.conf caps torch here: a configuration file's `constraint =`.
    cap = tmp_path / "constraints.txt"
    cap.write_text("alpha<=1.0\n")
    config = tmp_path / "pip.conf"
    config.write_text(f"[global]\nconstraint = {cap}\n")
    monkeypatch.setenv("PIP_CONFIG_FILE", str(config))
    monkeypatch.delenv("PIP_CONSTRAINT", raising=False)
    assert versions(["alpha"]) == {"alpha": "1.1"}  # the index's newest, not the machine's cap
    assert versions(["gamma"]) == {"alpha": "1.1", "gamma": "1.0"}  # the cap would make this unresolvable
    assert cap.read_text() == "alpha<=1.0\n" and config.is_file()  # no machine file touched
