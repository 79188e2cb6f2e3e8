"""``upload --sign`` and ``verify-signature`` end to end, offline: the CLI signs as the
ambient GitHub Actions identity of a private Sigstore on loopback (``sigstore_fixture``),
uploads to the local Hub, and the loader, ``verify-signature`` and PyPI ``kernels`` 0.19.1's
own verifier check the bundle."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from hub_trees import make_kernel, write_variant
from sigstore_fixture import sigstore_server  # noqa: F401  (the private Sigstore fixture)
from sigstoreserver import Workflow

REPO = "org/hub-relu"
TRUST = "org/*=acme/kernels"


def kb(*args: str, env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "kernel_builder", *args], capture_output=True, text=True,
                          env={**os.environ, **(env or {})}, timeout=180)


@pytest.mark.timeout(300)
def test_upload_sign_then_load_and_verify(hub_server, sigstore_server, tmp_path: Path, monkeypatch) -> None:
    root = make_kernel(tmp_path / "relu")
    out = tmp_path / "result.json"
    done = kb("upload", str(root), "--sign", "--output-json", str(out))
    assert done.returncode == 0, done.stderr
    signer = sigstore_server.workflow.signer_uri
    assert f"signed as {signer}" in done.stderr
    assert json.loads(out.read_text())["signed_by"] == signer
    assert {"POST /api/v2/signingCert", "POST /api/v1/log/entries", "GET /oidc/token"} <= set(sigstore_server.requests)
    assert sigstore_server.requests.count("POST /api/v2/signingCert") == 1  # one certificate for all variants
    files = hub_server.files(REPO, "v1")
    for variant in ("torch-cpu", "torch-cuda"):
        bundle = files[f"build/{variant}/metadata.json.sigstore"]
        assert bundle == (root / "build" / variant / "metadata.json.sigstore").read_bytes()  # also written beside it
        assert json.loads(bundle)["verificationMaterial"]["tlogEntries"][0]["kindVersion"]["kind"] == "hashedrekord"

    # The loader verifies it (strict, trusting acme/kernels for org/*).
    load = subprocess.run(
        [sys.executable, "-c",
         "import sys; from kernel_builder import get_kernel; from kernel_builder.variants.system import detect_system;"
         "m = get_kernel(sys.argv[1], version=1, system=detect_system(backend='cpu'), require_signature=True, trust_remote_code=True);"
         "import torch; print(m.relu(torch.tensor([-1.0, 2.0])).tolist())", REPO],
        capture_output=True, text=True, env={**os.environ, "KERNEL_BUILDER_TRUSTED_SIGNERS": TRUST}, timeout=180,
    )
    assert load.returncode == 0, load.stderr
    assert "[0.0, 2.0]" in load.stdout and "WARNING" not in load.stderr

    # verify-signature: one line per variant, exit 0.
    check = kb("verify-signature", REPO, "1", "--all-variants", "--trusted-signer", TRUST)
    assert check.returncode == 0, check.stderr
    lines = sorted(check.stdout.splitlines())
    assert lines == [f"✅ torch-{b}: metadata.json is signed by {signer}, and every file matches the digest" for b in ("cpu", "cuda")]
    # Without trusting acme/kernels, the same kernel fails (only kernels-community is trusted by default).
    untrusted = kb("verify-signature", REPO, "--version", "1")
    assert untrusted.returncode == 1
    assert untrusted.stdout.startswith("❌ torch-cpu: signed by ") and "which is not a trusted signer" in untrusted.stdout
    # The local tree verifies too (judged as the Hub repo it was published to).
    local = kb("verify-signature", str(root), "--all-variants", "--repo-id", REPO, "--json", env={"KERNEL_BUILDER_TRUSTED_SIGNERS": TRUST})
    assert local.returncode == 0, local.stderr
    rows = json.loads(local.stdout)
    assert [(r["variant"], r["signature"], r["digest"], r["ok"]) for r in rows] == [
        ("torch-cpu", "verified", "ok", True), ("torch-cuda", "verified", "ok", True)]


def test_verify_signature_reports_each_failure(hub_server, sigstore_server, tmp_path: Path) -> None:
    root = make_kernel(tmp_path / "relu")
    cpu, cuda = root / "build" / "torch-cpu", root / "build" / "torch-cuda"
    assert kb("upload", str(root), "--sign").returncode == 0
    # A file changed after signing: the signature holds, the digest does not.
    (cpu / "layers.py").write_text("# changed\n")
    # The cuda variant unsigned.
    (cuda / "metadata.json.sigstore").unlink()
    out = kb("verify-signature", str(root / "build"), "--all-variants", "--trusted-signer", "acme/kernels")
    assert out.returncode == 1
    lines = out.stdout.splitlines()
    assert lines[0].startswith("❌ torch-cpu: metadata.json is signed by") and "the files do not match the digest" in lines[0]
    assert "File hash mismatch for layers.py" in out.stdout
    assert "❌ torch-cuda: not signed (no metadata.json.sigstore)" in out.stdout
    skipped = kb("verify-signature", str(cuda), "--filter-unsigned")
    assert skipped.returncode == 0 and skipped.stdout == "" and "no variant checked" in skipped.stderr
    # metadata.json changed after signing.
    meta = json.loads((cpu / "metadata.json").read_text())
    (cpu / "metadata.json").write_text(json.dumps({**meta, "license": "MIT"}, indent=2) + "\n")
    tampered = kb("verify-signature", str(cpu), "--trusted-signer", "acme/kernels")
    assert tampered.returncode == 1 and tampered.stdout.startswith("❌ torch-cpu: metadata.json does not match its signature")


def test_sign_without_identity_sends_nothing(hub_server, sigstore_server, tmp_path: Path) -> None:
    root = make_kernel(tmp_path / "relu")
    env = {k: v for k, v in os.environ.items() if k not in ("GITHUB_ACTIONS", "ACTIONS_ID_TOKEN_REQUEST_URL", "ACTIONS_ID_TOKEN_REQUEST_TOKEN")}
    done = subprocess.run([sys.executable, "-m", "kernel_builder", "upload", str(root), "--sign"],
                          capture_output=True, text=True, env=env, timeout=180)
    assert done.returncode == 6, done.stderr
    assert "no identity to sign with" in done.stderr and "id-token: write" in done.stderr
    assert hub_server.write_requests() == []
    # A GitHub job without the id-token permission is named as such.
    no_perm = kb("upload", str(root), "--sign", env={"ACTIONS_ID_TOKEN_REQUEST_TOKEN": ""})
    assert no_perm.returncode == 6 and "ACTIONS_ID_TOKEN_REQUEST_TOKEN" in no_perm.stderr
    assert hub_server.write_requests() == []


def test_dry_run_signs_nothing(hub_server, sigstore_server, tmp_path: Path) -> None:
    root = make_kernel(tmp_path / "relu")
    done = kb("upload", str(root), "--sign", "--dry-run")
    assert done.returncode == 0, done.stderr
    assert "nothing was written and nothing was signed" in done.stderr
    assert sigstore_server.requests == [] and not list(root.glob("build/*/metadata.json.sigstore"))


def test_kernels_0_19_verifies_our_bundle(sigstore_server, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The bundle is in the format kernels-community publishes: PyPI kernels 0.19.1's own
    verifier accepts it when kernels-community's workflow identity signed it (its
    production trust root swapped for this test's, the one thing that needs the network)."""
    from kernels._internals import verify as kernels_verify
    from kernels._rust import KernelLocation, Oid
    from sigstore.models import ClientTrustConfig
    from sigstore.verify import Verifier

    from kernel_builder.hub.sign import sign_variants

    vdir = write_variant(tmp_path / "build", "cpu")
    sigstore_server.workflow = Workflow("huggingface/kernels-community", "build.yaml")
    sign_variants({"torch-cpu": vdir})
    root = ClientTrustConfig.from_json(sigstore_server.trust_config_path.read_text()).trusted_root
    monkeypatch.setattr(kernels_verify.Verifier, "production", classmethod(lambda cls, **kw: Verifier(trusted_root=root)))
    location = KernelLocation.remote("kernels-community/relu", Oid.from_str("0" * 40), "torch-cpu")
    result = kernels_verify.verify_signature(vdir, location=location, cache=False)
    assert isinstance(result, kernels_verify.SignatureVerificationResult.Success), result
    # ...and refuses it once metadata.json changed, as our loader does.
    (vdir / "metadata.json").write_text((vdir / "metadata.json").read_text().replace("Apache-2.0", "MIT"))
    result = kernels_verify.verify_signature(vdir, location=location, cache=False)
    assert isinstance(result, kernels_verify.SignatureVerificationResult.SignatureVerificationFailure)


def test_init_workflow_signs_on_release(tmp_path: Path) -> None:
    done = kb("init", str(tmp_path / "k"), "--name", "acme/relu", "--backends", "cpu")
    assert done.returncode == 0, done.stderr
    workflow = (tmp_path / "k" / ".github" / "workflows" / "kernel.yml").read_text()
    assert "id-token: write" in workflow
    assert "kernel-builder upload . --repo-id acme/relu --sign" in workflow


def test_docs_offline_example_runs_as_documented(tmp_path: Path) -> None:
    """docs/signatures.md's "Try it offline" example prints what the page says it prints."""
    repo = Path(__file__).resolve().parents[2]
    section = (repo / "docs" / "signatures.md").read_text().split("## Try it offline", 1)[1]
    code = section.split("```python\n", 1)[1].split("```", 1)[0]
    expected = section.split("prints\n\n```\n", 1)[1].split("```", 1)[0]
    script = tmp_path / "example.py"
    script.write_text(code)
    env = {k: v for k, v in os.environ.items() if not k.startswith(("KERNEL_BUILDER_", "SIGSTORE_", "ACTIONS_", "GITHUB_"))}
    done = subprocess.run([sys.executable, "-u", str(script)], cwd=repo, capture_output=True, text=True, env=env, timeout=180)
    assert done.returncode == 0, done.stderr
    assert done.stdout == expected
