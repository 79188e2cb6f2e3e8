"""Who may sign a kernel, and which Sigstore instance vouches for the signature: read by the
loader (verifying) and by ``hub/`` (signing at upload), so it lives below both.

A signed variant carries ``metadata.json.sigstore`` (``BUNDLE_NAME``): a Sigstore bundle whose certificate
names the CI workflow that signed (keyless signing: GitHub Actions' OIDC identity, as
kernels-community signs). A signature only means something when the signer is one the
user trusts for that kernel, so every verification is made against a list of trusted
signers:

* the publishers PyPI ``kernels`` 0.19.1 trusts by default, for every repository: the
  build workflows of ``huggingface/kernels-community`` and ``huggingface/kernels-community-rs``
  (``BUILTIN_SIGNERS``);
* the entries of ``KERNEL_BUILDER_TRUSTED_SIGNERS`` (whitespace-separated);
* the entries passed as ``trusted_signers=`` (``get_kernel``) or ``--trusted-signer``.

An entry is ``[REPO_PATTERN=]IDENTITY``. ``IDENTITY`` is a GitHub repository
(``OWNER/REPO`` or ``https://github.com/OWNER/REPO``: any workflow of it) or one workflow
(``https://github.com/OWNER/REPO/.github/workflows/FILE@REF``, where ``*`` matches any text,
e.g. ``@refs/tags/*``). ``REPO_PATTERN`` (``fnmatch``, e.g. ``acme/*``) limits the entry
to the Hub repositories it matches; without it the entry applies to every kernel.

The trust root is Sigstore's public instance (its TUF repository; from the local TUF cache
when the Hub is offline), or the client trust configuration named by
``KERNEL_BUILDER_SIGSTORE_TRUST_CONFIG`` / ``--trust-config`` (sigstore-python's JSON:
a trusted root plus a signing config, for a private Sigstore).
"""

from __future__ import annotations

import fnmatch
import hashlib
import os
import re
from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import Any

import attrs

from kernel_builder.errors import InvalidRequest

__all__ = [
    "BUNDLE_NAME",
    "GITHUB_ISSUER",
    "SIGNERS_ENV",
    "TRUST_CONFIG_ENV",
    "BUILTIN_SIGNERS",
    "TrustedSigner",
    "SignerClaims",
    "parse_signer",
    "signers_for",
    "trust_config_path",
    "trust_fingerprint",
    "certificate_claims",
]

BUNDLE_NAME = "metadata.json.sigstore"  # beside metadata.json in a variant
GITHUB_ISSUER = "https://token.actions.githubusercontent.com"
SIGNERS_ENV = "KERNEL_BUILDER_TRUSTED_SIGNERS"
TRUST_CONFIG_ENV = "KERNEL_BUILDER_SIGSTORE_TRUST_CONFIG"

_GITHUB = "https://github.com/"
_REPO = r"[A-Za-z0-9_.-]+/[A-Za-z0-9_.-]+"
_WORKFLOW = re.compile(rf"https://github\.com/(?P<repo>{_REPO})/\.github/workflows/[^@\s]+@\S+")
_REPO_URI = re.compile(rf"(?:https://github\.com/)?(?P<repo>{_REPO})/?")

# Fulcio's certificate extensions (https://github.com/sigstore/fulcio/blob/main/docs/oid-info.md).
_ISSUER_V1 = "1.3.6.1.4.1.57264.1.1"
_ISSUER_V2 = "1.3.6.1.4.1.57264.1.8"
_BUILD_SIGNER_URI = "1.3.6.1.4.1.57264.1.9"
_SOURCE_REPOSITORY_URI = "1.3.6.1.4.1.57264.1.12"


@attrs.frozen
class SignerClaims:
    """What a signing certificate says about its signer (Fulcio's extensions)."""

    issuer: str | None
    source_repository: str | None  # https://github.com/OWNER/REPO
    build_signer: str | None  # https://github.com/OWNER/REPO/.github/workflows/FILE@REF
    san: str | None = None

    @property
    def identity(self) -> str:
        return self.build_signer or self.san or self.source_repository or "an unknown signer"

    def to_json(self) -> dict[str, Any]:
        return attrs.asdict(self)

    @classmethod
    def from_json(cls, data: Any) -> SignerClaims:
        if not isinstance(data, dict):
            raise ValueError("signer claims must be an object")
        values = {k: data.get(k) for k in ("issuer", "source_repository", "build_signer", "san")}
        if not all(v is None or isinstance(v, str) for v in values.values()):
            raise ValueError("signer claims must be strings")
        return cls(**values)


@attrs.frozen
class TrustedSigner:
    """One trusted signer: a GitHub repository's workflows (``workflow`` None: any of them,
    else a build signer URI, ``*`` matching any text), for the Hub repos ``pattern`` matches."""

    repository: str  # OWNER/REPO
    workflow: str | None = None
    pattern: str | None = None
    issuer: str = GITHUB_ISSUER

    def applies_to(self, repo_id: str | None) -> bool:
        if self.pattern is None:
            return True
        return repo_id is not None and fnmatch.fnmatchcase(repo_id, self.pattern)

    def accepts(self, claims: SignerClaims) -> bool:
        if claims.issuer != self.issuer:
            return False
        if claims.source_repository != _GITHUB + self.repository:
            return False
        if self.workflow is None:
            return True
        return claims.build_signer is not None and fnmatch.fnmatchcase(claims.build_signer, self.workflow)

    def describe(self) -> str:
        who = self.workflow or f"any workflow of {_GITHUB}{self.repository}"
        return who if self.pattern is None else f"{who} (for {self.pattern})"


BUILTIN_SIGNERS: tuple[TrustedSigner, ...] = tuple(
    TrustedSigner(repo, f"{_GITHUB}{repo}/.github/workflows/{workflow}@refs/heads/main")
    for repo, workflow in (
        ("huggingface/kernels-community", "build.yaml"),
        ("huggingface/kernels-community", "build-mac.yaml"),
        ("huggingface/kernels-community", "build-windows.yaml"),
        ("huggingface/kernels-community", "sign-old-builds.yaml"),
        ("huggingface/kernels-community-rs", "build.yaml"),
    )
)


def parse_signer(entry: str, *, source: str = "trusted signer") -> TrustedSigner:
    """``[REPO_PATTERN=]IDENTITY`` (see the module docstring); ``InvalidRequest`` naming
    ``source`` when it is neither a repository nor a workflow identity."""
    text = entry.strip()
    pattern: str | None = None
    head, sep, tail = text.partition("=")
    if sep and "://" not in head:
        pattern, text = head.strip(), tail.strip()
        if not pattern:
            raise InvalidRequest(f"{source} {entry!r}: the repository pattern before '=' is empty",
                                 hint="write REPO_PATTERN=IDENTITY (e.g. acme/*=acme/kernels), or only IDENTITY")
    if match := _WORKFLOW.fullmatch(text):
        return TrustedSigner(match["repo"], text, pattern)
    if match := _REPO_URI.fullmatch(text):
        return TrustedSigner(match["repo"], None, pattern)
    raise InvalidRequest(
        f"{source} {entry!r}: expected OWNER/REPO, https://github.com/OWNER/REPO or "
        "https://github.com/OWNER/REPO/.github/workflows/FILE@REF",
        hint="optionally prefixed with the Hub repositories it signs for: acme/*=https://github.com/acme/kernels",
    )


def _env_signers() -> list[TrustedSigner]:
    value = os.environ.get(SIGNERS_ENV, "")
    return [parse_signer(item, source=f"{SIGNERS_ENV} entry") for item in value.split()]


def signers_for(repo_id: str | None, extra: Iterable[str] | None = None) -> list[TrustedSigner]:
    """The trusted signers that apply to ``repo_id`` (``None``: a local tree, only unscoped
    entries): built-in, then the environment's, then ``extra``."""
    signers = [*BUILTIN_SIGNERS, *_env_signers(), *(parse_signer(e) for e in (extra or ()))]
    return [s for s in signers if s.applies_to(repo_id)]


def trust_config_path(explicit: str | os.PathLike[str] | None = None) -> Path | None:
    """The custom client trust configuration in force, or ``None`` for Sigstore's public instance."""
    if explicit is not None:
        return Path(explicit)
    value = os.environ.get(TRUST_CONFIG_ENV)
    return Path(value) if value else None


def trust_fingerprint(path: Path | None) -> str:
    """What a receipt remembers of the trust root: ``public-good`` or the config file's sha256."""
    if path is None:
        return "public-good"
    try:
        return "sha256:" + hashlib.sha256(path.read_bytes()).hexdigest()
    except OSError:
        return "unreadable:" + str(path)


def _utf8_string(der: bytes) -> str | None:
    """The text of a DER UTF8String (Fulcio's "v2" extension values)."""
    if len(der) < 2 or der[0] != 0x0C:
        return None
    length, offset = der[1], 2
    if length & 0x80:
        count = length & 0x7F
        length, offset = int.from_bytes(der[2 : 2 + count], "big"), 2 + count
    body = der[offset : offset + length]
    if len(body) != length:
        return None
    return body.decode("utf-8", errors="replace")


def certificate_claims(cert: Any) -> SignerClaims:
    """The signer's claims in a Fulcio certificate (a ``cryptography`` certificate)."""
    from cryptography import x509  # lazy: cryptography loads only when a signature is checked

    values: dict[str, bytes] = {}
    san = None
    for ext in cert.extensions:
        if isinstance(ext.value, x509.UnrecognizedExtension):
            values[ext.oid.dotted_string] = ext.value.value
        elif isinstance(ext.value, x509.SubjectAlternativeName):
            names = ext.value.get_values_for_type(x509.UniformResourceIdentifier) or ext.value.get_values_for_type(x509.RFC822Name)
            san = names[0] if names else None
    v2 = _utf8_string(values[_ISSUER_V2]) if _ISSUER_V2 in values else None
    v1 = values[_ISSUER_V1].decode("utf-8", errors="replace") if _ISSUER_V1 in values else None
    issuer = v2 if v2 is not None and (v1 is None or v1 == v2) else (None if v2 is not None else v1)
    return SignerClaims(
        issuer=issuer,
        source_repository=_utf8_string(values[_SOURCE_REPOSITORY_URI]) if _SOURCE_REPOSITORY_URI in values else None,
        build_signer=_utf8_string(values[_BUILD_SIGNER_URI]) if _BUILD_SIGNER_URI in values else None,
        san=san,
    )


def accepted_by(claims: SignerClaims, signers: Sequence[TrustedSigner]) -> bool:
    return any(s.accepts(claims) for s in signers)
