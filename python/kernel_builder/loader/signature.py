"""Signature verification: is a variant's metadata.json the one its trusted publisher signed?

``verify_signature`` checks ``metadata.json.sigstore`` (a Sigstore bundle) against the raw
bytes of ``metadata.json`` with sigstore-python: the certificate chains to the trust
root's CA and carries a valid SCT, the transparency log entry's inclusion proof,
checkpoint and signed entry timestamp verify, the signature covers these exact bytes, and
the certificate names a trusted signer for the kernel (``signers``). The metadata holds
the digest of every file of the variant, and the loader checks that digest before any
import, so a verified signature vouches for the whole variant.

Hub kernels are checked at every load (``check_signature``); local trees are not (they
are what a developer just built), as in PyPI ``kernels`` 0.19.1. What a failure does:

* by default a warning on the ``kernel_builder.loader`` logger and the load goes on
  (PyPI ``kernels`` 0.19.1's behaviour);
* strict (``require_signature=True`` or ``KERNEL_BUILDER_REQUIRE_SIGNATURE=1``): the load is
  refused with ``SignatureError`` (an ``IntegrityError``) for an unsigned variant, an
  unreadable bundle, a signature that does not verify, and an untrusted signer alike.

A successful verification leaves a receipt under ``<cache>/.kernel-builder/signatures/``
(keyed by repo, commit and variant; holding the sha256 of metadata.json and of the
bundle, the trust root and the signer's claims), so later loads neither import sigstore
nor need the trust root (offline loads work); a receipt is used only while both files
have the recorded bytes, and the signer it records is checked against the signers
trusted now.
"""

from __future__ import annotations

import hashlib
import json
import logging
import os
from collections.abc import Sequence
from pathlib import Path

import attrs

from kernel_builder._files import write_atomic
from kernel_builder.loader.cache import cache_root
from kernel_builder.loader.errors import IntegrityError
from kernel_builder.signers import (
    BUNDLE_NAME,
    SignerClaims,
    TrustedSigner,
    accepted_by,
    certificate_claims,
    signers_for,
    trust_config_path,
    trust_fingerprint,
)

__all__ = [
    "BUNDLE_NAME",
    "REQUIRE_ENV",
    "SignatureError",
    "SignatureResult",
    "check_signature",
    "signature_required",
    "verify_signature",
]

log = logging.getLogger("kernel_builder.loader")

REQUIRE_ENV = "KERNEL_BUILDER_REQUIRE_SIGNATURE"

VERIFIED = "verified"
UNSIGNED = "unsigned"
BUNDLE_INVALID = "bundle-invalid"
METADATA_MISSING = "metadata-missing"
INVALID = "invalid"
UNTRUSTED = "untrusted-signer"
UNVERIFIABLE = "unverifiable"


class SignatureError(IntegrityError):
    """A Hub kernel's signature is missing or does not verify, and a signature is required."""


@attrs.frozen
class SignatureResult:
    """The outcome for one variant: ``status`` is one of ``verified``, ``unsigned``,
    ``bundle-invalid``, ``metadata-missing``, ``invalid``, ``untrusted-signer``, ``unverifiable``."""

    status: str
    detail: str = ""
    signer: SignerClaims | None = None
    trusted: tuple[str, ...] = ()

    @property
    def ok(self) -> bool:
        return self.status == VERIFIED

    def __str__(self) -> str:
        if self.status == VERIFIED:
            return f"metadata.json is signed by {self.signer.identity if self.signer else 'a trusted signer'}"
        if self.status == UNSIGNED:
            return f"not signed (no {BUNDLE_NAME}), so where it comes from cannot be verified"
        if self.status == BUNDLE_INVALID:
            return f"{BUNDLE_NAME} is not a valid Sigstore bundle, so the metadata cannot be verified: {self.detail}"
        if self.status == METADATA_MISSING:
            return "metadata.json is missing, so there is nothing the signature could vouch for"
        if self.status == UNTRUSTED:
            trusted = "; ".join(self.trusted) or "none"
            who = self.signer.identity if self.signer else "an unknown signer"
            return f"signed by {who}, which is not a trusted signer of this kernel (trusted: {trusted})"
        if self.status == UNVERIFIABLE:
            return f"the signature cannot be checked: {self.detail}"
        return f"metadata.json does not match its signature: {self.detail}"


def signature_required(require_signature: bool | None) -> bool:
    """The argument when given, else ``KERNEL_BUILDER_REQUIRE_SIGNATURE``."""
    if require_signature is not None:
        return require_signature
    return os.environ.get(REQUIRE_ENV, "").strip().lower() in ("1", "true", "yes", "on")


# -- receipts -------------------------------------------------------------------------------


def _receipt_path(repo_id: str, commit: str, variant: str) -> Path:
    key = hashlib.sha256(f"{repo_id}\0{commit}\0{variant}".encode()).hexdigest()[:32]
    return cache_root() / ".kernel-builder" / "signatures" / f"{key}.json"


def _sha256(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def _read_receipt(path: Path, expect: dict[str, str]) -> SignerClaims | None:
    """The signer a matching receipt records; ``None`` when there is none or it does not match."""
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
        if not isinstance(data, dict) or any(data.get(k) != v for k, v in expect.items()):
            return None
        return SignerClaims.from_json(data.get("signer"))
    except (OSError, ValueError):
        return None  # a broken receipt only costs a full verification


def _write_receipt(path: Path, expect: dict[str, str], signer: SignerClaims) -> None:
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        write_atomic(path, json.dumps({**expect, "signer": signer.to_json()}, indent=2))
    except OSError as exc:
        log.debug("cannot store the signature receipt %s: %s", path, exc)


# -- verification ---------------------------------------------------------------------------


def _verifier_and_bundle(bundle_bytes: bytes, trust_config: Path | None, offline: bool):  # type: ignore[no-untyped-def]
    """(sigstore Verifier, parsed Bundle) or a ``SignatureResult`` saying why not."""
    try:
        # lazy: sigstore (pydantic, cryptography, requests) loads only for a signed variant
        from sigstore.models import Bundle, ClientTrustConfig, InvalidBundle
        from sigstore.verify import Verifier  # lazy: as above
    except ImportError as exc:
        return SignatureResult(UNVERIFIABLE, f"sigstore is not installed ({exc}); pip install sigstore")
    try:
        bundle = Bundle.from_json(bundle_bytes)
    except (InvalidBundle, ValueError) as exc:
        return SignatureResult(BUNDLE_INVALID, str(exc).strip() or type(exc).__name__)
    try:
        if trust_config is not None:
            config = ClientTrustConfig.from_json(trust_config.read_text(encoding="utf-8"))
        else:
            config = ClientTrustConfig.production(offline=offline)
        verifier = Verifier(trusted_root=config.trusted_root)
    except Exception as exc:  # TUF, network, file and format errors alike: the root of trust is unavailable
        where = str(trust_config) if trust_config is not None else "Sigstore's public trust root (TUF)"
        return SignatureResult(UNVERIFIABLE, f"cannot load the trust root from {where}: {exc}")
    return verifier, bundle


class _Policy:
    """sigstore's ``VerificationPolicy`` for our trusted signers (the same rule receipts use)."""

    def __init__(self, signers: Sequence[TrustedSigner]) -> None:
        self.signers = signers

    def verify(self, cert) -> None:  # type: ignore[no-untyped-def]
        from sigstore.errors import VerificationError  # lazy: only reached while sigstore verifies

        claims = certificate_claims(cert)
        if not accepted_by(claims, self.signers):
            raise VerificationError(f"{claims.identity} is not a trusted signer")


def verify_signature(
    variant_dir: Path,
    *,
    repo_id: str | None,
    commit: str | None = None,
    signers: Sequence[TrustedSigner] | None = None,
    trust_config: Path | None = None,
    offline: bool = False,
    use_receipts: bool = True,
) -> SignatureResult:
    """Verify ``variant_dir/metadata.json`` against ``variant_dir/metadata.json.sigstore``.

    ``signers`` defaults to ``signers_for(repo_id)``; ``trust_config`` to the configured one
    (``trust_config_path()``). Receipts are read and written only for a Hub kernel
    (``repo_id`` and ``commit`` given) and with ``use_receipts``.
    """
    signers = list(signers if signers is not None else signers_for(repo_id))
    trusted = tuple(s.describe() for s in signers)
    trust_config = trust_config if trust_config is not None else trust_config_path()
    bundle_path, metadata_path = variant_dir / BUNDLE_NAME, variant_dir / "metadata.json"
    try:
        bundle_bytes = bundle_path.read_bytes()
    except FileNotFoundError:
        return SignatureResult(UNSIGNED, trusted=trusted)
    except OSError as exc:
        return SignatureResult(BUNDLE_INVALID, f"cannot read it: {exc}", trusted=trusted)
    try:
        metadata_bytes = metadata_path.read_bytes()
    except OSError:
        return SignatureResult(METADATA_MISSING, trusted=trusted)

    receipt = _receipt_path(repo_id, commit, variant_dir.name) if use_receipts and repo_id and commit else None
    expect = {
        "repo_id": repo_id or "", "commit": commit or "", "variant": variant_dir.name,
        "metadata_sha256": _sha256(metadata_bytes), "bundle_sha256": _sha256(bundle_bytes),
        "trust": trust_fingerprint(trust_config),
    }
    if receipt is not None and (claims := _read_receipt(receipt, expect)) is not None:
        if accepted_by(claims, signers):
            return SignatureResult(VERIFIED, signer=claims, trusted=trusted)
        return SignatureResult(UNTRUSTED, signer=claims, trusted=trusted)

    made = _verifier_and_bundle(bundle_bytes, trust_config, offline)
    if isinstance(made, SignatureResult):
        return attrs.evolve(made, trusted=trusted)
    verifier, bundle = made
    claims = certificate_claims(bundle.signing_certificate)
    if not accepted_by(claims, signers):
        return SignatureResult(UNTRUSTED, signer=claims, trusted=trusted)
    from sigstore.errors import Error as SigstoreError  # lazy: sigstore is loaded by now (see above)

    try:
        verifier.verify_artifact(metadata_bytes, bundle, _Policy(signers))
    except (SigstoreError, ValueError) as exc:
        return SignatureResult(INVALID, str(exc).strip() or type(exc).__name__, signer=claims, trusted=trusted)
    if receipt is not None:
        _write_receipt(receipt, expect, claims)
    return SignatureResult(VERIFIED, signer=claims, trusted=trusted)


def check_signature(
    variant_dir: Path,
    *,
    repo_id: str,
    commit: str,
    require_signature: bool | None = None,
    trusted_signers: Sequence[str] | None = None,
    offline: bool = False,
) -> SignatureResult:
    """The load-time check of a Hub kernel: warn, or (strict) raise ``SignatureError``."""
    result = verify_signature(
        variant_dir, repo_id=repo_id, commit=commit, signers=signers_for(repo_id, trusted_signers), offline=offline,
    )
    label = f"Kernel {repo_id} (commit {commit[:12]}) variant {variant_dir.name}"
    if result.ok:
        log.debug("%s: %s", label, result)
        return result
    if signature_required(require_signature):
        raise SignatureError(
            f"refusing to load {label}: {result}",
            hint=_hint(result, repo_id),
        )
    log.warning("%s: %s", label, result)
    return result


def _hint(result: SignatureResult, repo_id: str) -> str:
    if result.status == UNTRUSTED and result.signer is not None and result.signer.source_repository:
        repo = result.signer.source_repository.removeprefix("https://github.com/")
        return (f"if you trust {repo} to publish {repo_id}, add it: "
                f"KERNEL_BUILDER_TRUSTED_SIGNERS='{repo_id}={repo}' (or trusted_signers=[...]); "
                f"require_signature=False (or {REQUIRE_ENV}=0) loads it with a warning")
    if result.status == UNSIGNED:
        return f"ask the publisher to sign it (`kernel-builder upload --sign`); require_signature=False (or {REQUIRE_ENV}=0) loads it with a warning"
    return f"check it with `kernel-builder verify-signature {repo_id}`; require_signature=False (or {REQUIRE_ENV}=0) loads it with a warning"
