"""The ``sigstore_server`` pytest fixture: a private Sigstore on loopback for signing tests.

Starts ``sigstoreserver.SigstoreServer`` (fresh CA, CT log and transparency log keys),
writes its client trust configuration and points this process's environment (and so every
subprocess a test starts) at it: ``KERNEL_BUILDER_SIGSTORE_TRUST_CONFIG`` for kernel-builder,
and the variables of a GitHub Actions job allowed to request an OIDC token, so signing
finds an ambient identity exactly as on a runner. ``SIGSTORE_ID_TOKEN`` and the trusted
signer and strict-mode variables are cleared. Import it in a test module with
``from sigstore_fixture import sigstore_server  # noqa: F401``.
"""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from sigstoreserver import SigstoreServer

__all__ = ["sigstore_server"]


@pytest.fixture
def sigstore_server(tmp_path_factory: pytest.TempPathFactory, monkeypatch: pytest.MonkeyPatch) -> Iterator[SigstoreServer]:
    server = SigstoreServer().start()
    config = server.write_trust_config(tmp_path_factory.mktemp("sigstore") / "trust_config.json")
    server.trust_config_path = config  # type: ignore[attr-defined]
    monkeypatch.setenv("KERNEL_BUILDER_SIGSTORE_TRUST_CONFIG", str(config))
    for name, value in server.env().items():
        monkeypatch.setenv(name, value)
    for name in ("SIGSTORE_ID_TOKEN", "KERNEL_BUILDER_TRUSTED_SIGNERS", "KERNEL_BUILDER_REQUIRE_SIGNATURE"):
        monkeypatch.delenv(name, raising=False)
    try:
        yield server
    finally:
        server.stop()
