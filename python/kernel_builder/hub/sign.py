"""Sign each variant's metadata.json with Sigstore (keyless), as kernels-community does.

``upload --sign`` runs this before it plans the commit: one ephemeral key and one Fulcio
certificate for the run, bound to the ambient OIDC identity of the CI job (GitHub Actions
with ``permissions: id-token: write``; sigstore-python also finds GitLab, Buildkite,
CircleCI and Google Cloud identities), or to the token in ``SIGSTORE_ID_TOKEN``. Each
variant's ``metadata.json`` (raw bytes, digest included) is signed and logged in the
transparency log; the bundle is written beside it as ``metadata.json.sigstore`` (when the
tree is writable) and uploaded there. The metadata holds the digest of every file, so the
signature covers the whole variant.

The Sigstore instance is the public one, or the client trust configuration given with
``--trust-config`` / ``KERNEL_BUILDER_SIGSTORE_TRUST_CONFIG`` (a private Sigstore; the
tests run one on loopback).
"""

from __future__ import annotations

import logging
import os
from collections.abc import Mapping
from pathlib import Path

import attrs

from kernel_builder._files import write_atomic
from kernel_builder.errors import HubError
from kernel_builder.signers import BUNDLE_NAME, SignerClaims, certificate_claims, trust_config_path

__all__ = ["SigningError", "SignedVariants", "sign_variants", "TOKEN_ENV"]

log = logging.getLogger(__name__)
TOKEN_ENV = "SIGSTORE_ID_TOKEN"


class SigningError(HubError):
    """No identity to sign with, or the Sigstore services refused to sign."""



@attrs.frozen
class SignedVariants:
    """The bundle (JSON bytes) of each variant and the identity that signed them."""

    bundles: Mapping[str, bytes]
    signer: SignerClaims


def _identity_token(client_id: str = "sigstore"):  # type: ignore[no-untyped-def]
    from sigstore.oidc import IdentityError, IdentityToken, detect_credential  # lazy: sigstore loads only to sign

    raw = os.environ.get(TOKEN_ENV)
    try:
        if not raw:
            raw = detect_credential(client_id)
        if not raw:
            raise SigningError(
                "no identity to sign with: this is not a CI job with an OIDC identity, and SIGSTORE_ID_TOKEN is unset",
                hint="sign in CI (GitHub Actions: `permissions: id-token: write`), or set SIGSTORE_ID_TOKEN to an OIDC token for audience 'sigstore'",
            )
        return IdentityToken(raw, client_id)
    except IdentityError as exc:
        raise SigningError(f"cannot get an identity to sign with: {exc}",
                           hint="GitHub Actions needs `permissions: id-token: write` on the job") from exc


def sign_variants(variants: Mapping[str, Path], *, trust_config: Path | None = None, write: bool = True) -> SignedVariants:
    """Sign ``<variant dir>/metadata.json`` of every variant; ``write`` also puts each bundle
    beside its metadata.json (temp file + rename; a read-only tree is left as it is)."""
    # lazy: sigstore (pydantic, cryptography, requests) loads only for `upload --sign`
    from sigstore.errors import Error as SigstoreError
    from sigstore.models import ClientTrustConfig  # lazy: as above
    from sigstore.sign import SigningContext  # lazy: as above

    path = trust_config if trust_config is not None else trust_config_path()
    try:
        config = ClientTrustConfig.from_json(path.read_text(encoding="utf-8")) if path is not None else ClientTrustConfig.production()
    except Exception as exc:  # file, format, TUF and network errors alike
        where = str(path) if path is not None else "Sigstore's public instance (TUF)"
        raise SigningError(f"cannot load the Sigstore trust configuration from {where}: {exc}",
                           hint="check --trust-config / KERNEL_BUILDER_SIGSTORE_TRUST_CONFIG, or the network") from exc
    token = _identity_token()
    bundles: dict[str, bytes] = {}
    signer: SignerClaims | None = None
    try:
        context = SigningContext.from_trust_config(config)
        with context.signer(token, cache=True) as session:
            for name, vdir in variants.items():
                bundle = session.sign_artifact((vdir / "metadata.json").read_bytes())
                signer = signer or certificate_claims(bundle.signing_certificate)
                bundles[name] = bundle.to_json().encode("utf-8")
    except (SigstoreError, OSError, ValueError) as exc:
        raise SigningError(f"signing failed ({token.identity}): {exc}",
                           hint="nothing was uploaded; rerun the upload when the Sigstore services answer") from exc
    except Exception as exc:  # requests' HTTP and connection errors from Fulcio and Rekor
        raise SigningError(f"signing failed: the Sigstore services did not answer: {exc}",
                           hint="nothing was uploaded; rerun the upload when the Sigstore services answer") from exc
    if write:
        for name, data in bundles.items():
            target = variants[name] / BUNDLE_NAME
            try:
                write_atomic(target, data)
            except OSError as exc:
                log.info("not writing %s (%s): it is uploaded from memory", target, exc.strerror or exc)
    assert signer is not None or not variants
    return SignedVariants(bundles, signer or SignerClaims(None, None, None))
