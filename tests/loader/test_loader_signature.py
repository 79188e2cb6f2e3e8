"""Signature verification at load, for real: kernels signed through a private Sigstore on
loopback (``sigstore_fixture``), published on the local Hub, loaded with ``get_kernel``.

Each failure the docs name (docs/signatures.md) is made here: an unsigned variant, a
metadata.json changed after signing (digest recomputed, so only the signature can tell),
a signer that is not trusted for the kernel, and a bundle that is not a bundle. By default
each is a warning and the kernel loads; strict mode (argument or environment) refuses it.
"""

from __future__ import annotations

import json
import logging
from pathlib import Path

import pytest
from hub_fixture import publish
from loader_trees import write_variant
from sigstore_fixture import sigstore_server  # noqa: F401  (the private Sigstore fixture)
from sigstoreserver import Workflow

from kernel_builder import get_kernel, install_kernel
from kernel_builder.hub.sign import sign_variants
from kernel_builder.loader import signature
from kernel_builder.loader.cache import cache_root
from kernel_builder.loader.errors import IntegrityError, InvalidRequest
from kernel_builder.loader.signature import SignatureError, verify_signature
from kernel_builder.signers import BUILTIN_SIGNERS, parse_signer, signers_for
from kernel_builder.tree.digest import compute_digest
from kernel_builder.tree.metadata import Metadata
from kernel_builder.variants.system import detect_system

CPU = detect_system(backend="cpu")
REPO = "acme/relu-test"
TRUST = "acme/*=acme/kernels"  # the publisher identity of acme's kernels: the acme/kernels repository's workflows


def _build(tmp_path: Path, name: str = "b") -> Path:
    build = tmp_path / name / "build"
    write_variant(build, "torch-cpu")
    return build


def _sign(build: Path) -> None:
    sign_variants({p.name: p for p in build.iterdir()})


def _warnings(caplog: pytest.LogCaptureFixture) -> list[str]:
    return [r.getMessage() for r in caplog.records if r.name == "kernel_builder.loader" and r.levelno == logging.WARNING]


@pytest.fixture
def trusted(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("KERNEL_BUILDER_TRUSTED_SIGNERS", TRUST)


# -- the trusted-signer grammar -----------------------------------------------------------------


def test_signer_entries_parse() -> None:
    assert parse_signer("acme/kernels").repository == "acme/kernels"
    assert parse_signer("https://github.com/acme/kernels").workflow is None
    wf = parse_signer("acme/*=https://github.com/acme/kernels/.github/workflows/release.yml@refs/tags/*")
    assert (wf.repository, wf.pattern) == ("acme/kernels", "acme/*")
    assert wf.applies_to("acme/relu") and not wf.applies_to("other/relu") and not wf.applies_to(None)
    for bad in ("", "acme", "https://gitlab.com/a/b", "=acme/kernels", "acme/kernels/extra"):
        with pytest.raises(InvalidRequest):
            parse_signer(bad)


def test_bad_environment_entry_is_named(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("KERNEL_BUILDER_TRUSTED_SIGNERS", "acme/kernels nonsense")
    with pytest.raises(InvalidRequest, match="KERNEL_BUILDER_TRUSTED_SIGNERS entry 'nonsense'"):
        signers_for("acme/relu")


def test_builtin_signers_are_kernels_community_workflows() -> None:
    """The publishers PyPI kernels 0.19.1 trusts by default, for every repository."""
    assert {s.repository for s in BUILTIN_SIGNERS} == {"huggingface/kernels-community", "huggingface/kernels-community-rs"}
    assert all(s.workflow and s.workflow.endswith("@refs/heads/main") and s.pattern is None for s in BUILTIN_SIGNERS)
    assert signers_for("anyone/kernel") == list(BUILTIN_SIGNERS)


# -- load: success, receipts ---------------------------------------------------------------------


def test_signed_kernel_loads_silently_and_leaves_a_receipt(
    hub_server, sigstore_server, trusted, tmp_path: Path, caplog: pytest.LogCaptureFixture, monkeypatch: pytest.MonkeyPatch
) -> None:
    build = _build(tmp_path)
    _sign(build)
    bundle = json.loads((build / "torch-cpu" / "metadata.json.sigstore").read_text())
    assert bundle["mediaType"].startswith("application/vnd.dev.sigstore.bundle")
    publish(hub_server, REPO, build, version=1)
    caplog.set_level(logging.DEBUG, logger="kernel_builder.loader")
    module = get_kernel(REPO, version=1, system=CPU, require_signature=True)
    assert module.relu([-1, 2]) == [0, 2]
    assert _warnings(caplog) == []
    assert any("metadata.json is signed by https://github.com/acme/kernels/.github/workflows/release.yml@refs/heads/main" in r.getMessage()
               for r in caplog.records)
    receipts = list((cache_root() / ".kernel-builder" / "signatures").glob("*.json"))
    assert len(receipts) == 1
    assert json.loads(receipts[0].read_text())["signer"]["source_repository"] == "https://github.com/acme/kernels"

    # A later load uses the receipt: sigstore is not asked again (the trust root may be gone).
    monkeypatch.setenv("KERNEL_BUILDER_SIGSTORE_TRUST_CONFIG", str(sigstore_server.trust_config_path))
    calls = []
    real = signature._verifier_and_bundle
    monkeypatch.setattr(signature, "_verifier_and_bundle", lambda *a: calls.append(a) or real(*a))
    install_kernel(REPO, version=1, system=CPU, require_signature=True)
    assert calls == []
    # ...but the signer it records is judged against the signers trusted now.
    monkeypatch.delenv("KERNEL_BUILDER_TRUSTED_SIGNERS")
    with pytest.raises(SignatureError, match="not a trusted signer"):
        install_kernel(REPO, version=1, system=CPU, require_signature=True)


def test_trusted_signers_argument(hub_server, sigstore_server, tmp_path: Path, caplog: pytest.LogCaptureFixture) -> None:
    build = _build(tmp_path)
    _sign(build)
    publish(hub_server, REPO, build, version=1)
    workflow = "https://github.com/acme/kernels/.github/workflows/release.yml@refs/heads/*"
    assert get_kernel(REPO, version=1, system=CPU, require_signature=True, trusted_signers=[f"acme/relu-*={workflow}"])
    with pytest.raises(SignatureError):  # a pattern for other repositories does not apply
        install_kernel(REPO, version=1, system=CPU, require_signature=True, trusted_signers=["other/*=acme/kernels"])


# -- the documented failures: warning by default, refusal when strict ---------------------------


def _tamper(build: Path) -> None:
    """Change metadata.json after signing, keeping the digest consistent (only the signature can tell)."""
    vdir = build / "torch-cpu"
    meta = Metadata.read(vdir / "metadata.json")
    Metadata(**{**{f: getattr(meta, f) for f in ("name", "id", "version", "backend", "upstream", "python_depends", "build_layout")},
                "license": "Proprietary"}).with_digest(compute_digest(vdir)).write(vdir / "metadata.json")


CASES = {
    "unsigned": ("not signed (no metadata.json.sigstore)", lambda build, server: None),
    "tampered": ("metadata.json does not match its signature", lambda build, server: (_sign(build), _tamper(build))),
    "wrong-identity": (
        "signed by https://github.com/evil/fork/.github/workflows/release.yml@refs/heads/main, which is not a trusted signer",
        lambda build, server: (setattr(server, "workflow", Workflow("evil/fork")), _sign(build)),
    ),
    "not-a-bundle": ("is not a valid Sigstore bundle",
                     lambda build, server: (build / "torch-cpu" / "metadata.json.sigstore").write_text('{"mediaType": "x"}')),
}


@pytest.mark.parametrize("case", sorted(CASES))
def test_failure_warns_by_default(
    hub_server, sigstore_server, trusted, tmp_path: Path, caplog: pytest.LogCaptureFixture, case: str
) -> None:
    message, make = CASES[case]
    build = _build(tmp_path)
    make(build, sigstore_server)
    publish(hub_server, REPO, build, version=1)
    module = get_kernel(REPO, version=1, system=CPU)
    assert module.relu([-3]) == [0]
    warnings = _warnings(caplog)
    assert len(warnings) == 1 and message in warnings[0], warnings
    assert warnings[0].startswith(f"Kernel {REPO} (commit ") and "variant torch-cpu" in warnings[0]


@pytest.mark.parametrize("how", ["argument", "environment"])
@pytest.mark.parametrize("case", sorted(CASES))
def test_failure_is_refused_when_strict(
    hub_server, sigstore_server, trusted, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, case: str, how: str
) -> None:
    message, make = CASES[case]
    build = _build(tmp_path)
    make(build, sigstore_server)
    publish(hub_server, REPO, build, version=1)
    kwargs = {"require_signature": True} if how == "argument" else {}
    if how == "environment":
        monkeypatch.setenv("KERNEL_BUILDER_REQUIRE_SIGNATURE", "1")
    with pytest.raises(SignatureError, match="refusing to load") as info:
        get_kernel(REPO, version=1, system=CPU, **kwargs)
    assert message in str(info.value) and isinstance(info.value, IntegrityError)
    assert "require_signature=False" in str(info.value)  # the hint says how to load it anyway
    # The argument overrides the environment.
    if how == "environment":
        assert get_kernel(REPO, version=1, system=CPU, require_signature=False).relu([1]) == [1]


def test_local_trees_are_not_checked(sigstore_server, tmp_path: Path, caplog: pytest.LogCaptureFixture, monkeypatch) -> None:
    from kernel_builder import get_local_kernel

    monkeypatch.setenv("KERNEL_BUILDER_REQUIRE_SIGNATURE", "1")
    build = _build(tmp_path)
    assert get_local_kernel(build.parent, system=CPU).relu([2]) == [2]
    assert _warnings(caplog) == []


def test_verify_signature_without_receipts_for_local_dirs(sigstore_server, tmp_path: Path) -> None:
    build = _build(tmp_path)
    _sign(build)
    result = verify_signature(build / "torch-cpu", repo_id=None, signers=[parse_signer("acme/kernels")])
    assert result.ok and result.signer and result.signer.build_signer == sigstore_server.workflow.signer_uri
    assert not verify_signature(build / "torch-cpu", repo_id=None).ok  # only kernels-community is trusted by default
    assert not list(tmp_path.glob("**/.kernel-builder/signatures/*"))


def test_unreachable_trust_root_is_reported(hub_server, sigstore_server, trusted, tmp_path: Path, monkeypatch) -> None:
    build = _build(tmp_path)
    _sign(build)
    publish(hub_server, REPO, build, version=1)
    missing = tmp_path / "gone.json"
    missing.write_text("{not json")
    monkeypatch.setenv("KERNEL_BUILDER_SIGSTORE_TRUST_CONFIG", str(missing))
    with pytest.raises(SignatureError, match="the signature cannot be checked: cannot load the trust root from"):
        get_kernel(REPO, version=1, system=CPU, require_signature=True)


def test_offline_load_uses_the_receipt(hub_server, sigstore_server, trusted, tmp_path: Path, monkeypatch) -> None:
    """HF_HUB_OFFLINE=1: no Hub and no trust root, yet a strict load of a verified kernel works."""
    build = _build(tmp_path)
    _sign(build)
    publish(hub_server, REPO, build, version=1)
    install_kernel(REPO, version=1, system=CPU, require_signature=True)
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    monkeypatch.setattr(signature, "_verifier_and_bundle", lambda *a: pytest.fail("sigstore asked again"))
    hub_server.clear_log()
    assert get_kernel(REPO, version=1, system=CPU, require_signature=True).relu([-1]) == [0]
    assert hub_server.requests == []
