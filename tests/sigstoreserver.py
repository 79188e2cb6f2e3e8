"""A private Sigstore on loopback: a GitHub-Actions-like OIDC token endpoint, a Fulcio-like
certificate authority with a CT log, and a Rekor-like transparency log (API v1).

Signing with sigstore-python needs three services and verifying needs their keys. The
real ones (GitHub's token service, fulcio.sigstore.dev, rekor.sigstore.dev, the TUF trust
root) cannot be reached from CI, so a test makes its own: fresh keys every time, served on
127.0.0.1, described to sigstore-python by a client trust configuration
(``trust_config()``: a trusted root with this CA, CT log key and log key, plus a signing
config naming these URLs), the same file a user hands ``--trust-config``. Nothing is
faked inside sigstore-python: it requests a token, asks for a certificate, checks its
embedded SCT, submits a ``hashedrekord`` entry and later verifies the chain, the SCT, the
Merkle inclusion proof, the signed checkpoint and the signed entry timestamp for real.

Endpoints (the shapes sigstore-python 4 and ``id`` speak):

* ``GET /oidc/token?audience=sigstore`` with ``Authorization: bearer <request token>``:
  ``{"value": <JWT>}``, as ``ACTIONS_ID_TOKEN_REQUEST_URL`` answers on a GitHub runner.
  The JWT is HS256 with a secret only this server knows, its claims those of a workflow
  run (``job_workflow_ref``, ``repository``, ``ref``...) set by ``workflow``.
* ``POST /api/v2/signingCert``: checks the bearer JWT, issues a certificate for the CSR's
  key carrying the Fulcio extensions (issuer, build signer URI, source repository...) and
  an embedded SCT signed by the CT log key.
* ``POST /api/v1/log/entries``: appends the entry to an in-memory Merkle tree and answers
  with its inclusion proof, a signed checkpoint and a signed entry timestamp.

``env()`` is the environment of a GitHub Actions job that may request an ID token
(``GITHUB_ACTIONS``, ``ACTIONS_ID_TOKEN_REQUEST_URL``/``_TOKEN``). Test-only code.
"""

from __future__ import annotations

import base64
import datetime as dt
import hashlib
import hmac
import json
import struct
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any
from urllib.parse import parse_qs, urlsplit

import rfc8785
from cryptography import x509
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec
from cryptography.x509.oid import ExtendedKeyUsageOID, NameOID, ObjectIdentifier

__all__ = ["SigstoreServer", "Workflow", "GITHUB_ISSUER"]

GITHUB_ISSUER = "https://token.actions.githubusercontent.com"
_FULCIO = "1.3.6.1.4.1.57264.1."
_SCT_LIST_OID = ObjectIdentifier("1.3.6.1.4.1.11129.2.4.2")
_EPOCH = dt.datetime(2020, 1, 1, tzinfo=dt.timezone.utc)


def _b64url(data: bytes) -> str:
    return base64.urlsafe_b64encode(data).rstrip(b"=").decode()


def _spki(key: ec.EllipticCurvePublicKey) -> bytes:
    return key.public_bytes(serialization.Encoding.DER, serialization.PublicFormat.SubjectPublicKeyInfo)


def _key_id(key: ec.EllipticCurvePublicKey) -> bytes:
    return hashlib.sha256(_spki(key)).digest()


def _der_utf8(text: str) -> bytes:
    """DER UTF8String (the encoding of Fulcio's "v2" extensions)."""
    raw = text.encode()
    return b"\x0c" + _der_len(len(raw)) + raw


def _der_len(n: int) -> bytes:
    if n < 0x80:
        return bytes([n])
    body = n.to_bytes((n.bit_length() + 7) // 8, "big")
    return bytes([0x80 | len(body)]) + body


class Workflow:
    """The GitHub Actions run whose identity the token endpoint hands out."""

    def __init__(self, repository: str = "acme/kernels", workflow: str = "release.yml", ref: str = "refs/heads/main") -> None:
        self.repository = repository
        self.workflow = workflow
        self.ref = ref

    @property
    def signer_uri(self) -> str:
        """What Fulcio puts in the SAN and the Build Signer URI extension."""
        return f"https://github.com/{self.repository}/.github/workflows/{self.workflow}@{self.ref}"

    @property
    def repository_uri(self) -> str:
        return f"https://github.com/{self.repository}"

    def claims(self) -> dict[str, Any]:
        now = int(time.time())
        job_ref = f"{self.repository}/.github/workflows/{self.workflow}@{self.ref}"
        return {
            "iss": GITHUB_ISSUER, "aud": "sigstore", "iat": now, "nbf": now - 5, "exp": now + 600,
            "sub": f"repo:{self.repository}:ref:{self.ref}", "repository": self.repository,
            "repository_owner": self.repository.split("/")[0], "ref": self.ref, "sha": "0" * 40,
            "workflow": self.workflow, "job_workflow_ref": job_ref, "job_workflow_sha": "0" * 40,
            "event_name": "push", "runner_environment": "github-hosted",
            "workflow_ref": job_ref, "workflow_sha": "0" * 40, "run_id": "1", "run_attempt": "1",
        }


class _MerkleLog:
    """An RFC 6962 Merkle tree of entry bodies, with inclusion proofs."""

    def __init__(self) -> None:
        self.leaves: list[bytes] = []

    @staticmethod
    def _leaf(data: bytes) -> bytes:
        return hashlib.sha256(b"\x00" + data).digest()

    @staticmethod
    def _node(left: bytes, right: bytes) -> bytes:
        return hashlib.sha256(b"\x01" + left + right).digest()

    def _root(self, hashes_: list[bytes]) -> bytes:
        if len(hashes_) == 1:
            return hashes_[0]
        k = 1
        while k * 2 < len(hashes_):
            k *= 2
        return self._node(self._root(hashes_[:k]), self._root(hashes_[k:]))

    def _path(self, index: int, hashes_: list[bytes]) -> list[bytes]:
        if len(hashes_) == 1:
            return []
        k = 1
        while k * 2 < len(hashes_):
            k *= 2
        if index < k:
            return self._path(index, hashes_[:k]) + [self._root(hashes_[k:])]
        return self._path(index - k, hashes_[k:]) + [self._root(hashes_[:k])]

    def append(self, body: bytes) -> tuple[int, int, bytes, list[bytes]]:
        """Add ``body``; returns (index, tree size, root hash, inclusion proof)."""
        self.leaves.append(self._leaf(body))
        index, size = len(self.leaves) - 1, len(self.leaves)
        return index, size, self._root(self.leaves), self._path(index, self.leaves)


class SigstoreServer:
    """The three services on one loopback port; ``trust_config()`` describes them."""

    def __init__(self) -> None:
        self.workflow = Workflow()
        self.request_token = "test-request-token"
        self._jwt_secret = b"test-oidc-secret"
        self.ca_key = ec.generate_private_key(ec.SECP256R1())
        self.ct_key = ec.generate_private_key(ec.SECP256R1())
        self.log_key = ec.generate_private_key(ec.SECP256R1())
        self.ca_cert = self._make_ca()
        self.log = _MerkleLog()
        self.lock = threading.Lock()
        self.requests: list[str] = []
        self._httpd = ThreadingHTTPServer(("127.0.0.1", 0), self._handler())
        self._thread: threading.Thread | None = None

    # -- lifecycle -----------------------------------------------------------------------------

    @property
    def url(self) -> str:
        host, port = self._httpd.server_address[:2]
        return f"http://{host}:{port}"

    def start(self) -> SigstoreServer:
        self._thread = threading.Thread(target=self._httpd.serve_forever, daemon=True)
        self._thread.start()
        return self

    def stop(self) -> None:
        self._httpd.shutdown()
        self._httpd.server_close()
        if self._thread is not None:
            self._thread.join(timeout=10)

    def env(self) -> dict[str, str]:
        """A GitHub Actions job with ``permissions: id-token: write``, as ``id`` sees it."""
        return {
            "GITHUB_ACTIONS": "true",
            "ACTIONS_ID_TOKEN_REQUEST_URL": f"{self.url}/oidc/token?api-version=2.0",
            "ACTIONS_ID_TOKEN_REQUEST_TOKEN": self.request_token,
        }

    # -- trust material ------------------------------------------------------------------------

    def _make_ca(self) -> x509.Certificate:
        name = x509.Name([x509.NameAttribute(NameOID.ORGANIZATION_NAME, "kernel-builder tests"),
                          x509.NameAttribute(NameOID.COMMON_NAME, "test-fulcio")])
        public = self.ca_key.public_key()
        return (
            x509.CertificateBuilder()
            .subject_name(name).issuer_name(name).public_key(public)
            .serial_number(x509.random_serial_number())
            .not_valid_before(_EPOCH).not_valid_after(_EPOCH + dt.timedelta(days=365 * 30))
            .add_extension(x509.BasicConstraints(ca=True, path_length=1), critical=True)
            .add_extension(x509.KeyUsage(digital_signature=False, content_commitment=False, key_encipherment=False,
                                         data_encipherment=False, key_agreement=False, key_cert_sign=True,
                                         crl_sign=True, encipher_only=False, decipher_only=False), critical=True)
            .add_extension(x509.SubjectKeyIdentifier.from_public_key(public), critical=False)
            .sign(self.ca_key, hashes.SHA256())
        )

    def _public_key_json(self, key: ec.EllipticCurvePrivateKey) -> dict[str, Any]:
        return {
            "rawBytes": base64.b64encode(_spki(key.public_key())).decode(),
            "keyDetails": "PKIX_ECDSA_P256_SHA_256",
            "validFor": {"start": "2020-01-01T00:00:00Z"},
        }

    def trusted_root(self) -> dict[str, Any]:
        def log(key: ec.EllipticCurvePrivateKey) -> dict[str, Any]:
            return {
                "baseUrl": self.url, "hashAlgorithm": "SHA2_256", "publicKey": self._public_key_json(key),
                "logId": {"keyId": base64.b64encode(_key_id(key.public_key())).decode()},
            }

        return {
            "mediaType": "application/vnd.dev.sigstore.trustedroot+json;version=0.1",
            "tlogs": [log(self.log_key)],
            "certificateAuthorities": [{
                "subject": {"organization": "kernel-builder tests", "commonName": "test-fulcio"},
                "uri": self.url,
                "certChain": {"certificates": [{"rawBytes": base64.b64encode(self.ca_cert.public_bytes(serialization.Encoding.DER)).decode()}]},
                "validFor": {"start": "2020-01-01T00:00:00Z"},
            }],
            "ctlogs": [log(self.ct_key)],
            "timestampAuthorities": [],
        }

    def signing_config(self) -> dict[str, Any]:
        def service(path: str) -> dict[str, Any]:
            return {"url": f"{self.url}{path}", "majorApiVersion": 1, "validFor": {"start": "2020-01-01T00:00:00Z"},
                    "operator": "kernel-builder tests"}

        return {
            "mediaType": "application/vnd.dev.sigstore.signingconfig.v0.2+json",
            "caUrls": [service("")],
            "oidcUrls": [service("/oidc")],
            "rekorTlogUrls": [service("")],
            "tsaUrls": [],
            "rekorTlogConfig": {"selector": "ANY"},
            "tsaConfig": {"selector": "ANY"},
        }

    def trust_config(self) -> dict[str, Any]:
        """sigstore-python's ClientTrustConfig (what ``--trust-config`` reads)."""
        return {
            "mediaType": "application/vnd.dev.sigstore.clienttrustconfig.v0.1+json",
            "trustedRoot": self.trusted_root(),
            "signingConfig": self.signing_config(),
        }

    def write_trust_config(self, path: Path) -> Path:
        path.write_text(json.dumps(self.trust_config(), indent=2))
        return path

    # -- OIDC ----------------------------------------------------------------------------------

    def identity_token(self, claims: dict[str, Any] | None = None) -> str:
        header = _b64url(json.dumps({"alg": "HS256", "typ": "JWT"}).encode())
        payload = _b64url(json.dumps(claims or self.workflow.claims()).encode())
        signature = hmac.new(self._jwt_secret, f"{header}.{payload}".encode(), hashlib.sha256).digest()
        return f"{header}.{payload}.{_b64url(signature)}"

    def _check_token(self, token: str) -> dict[str, Any]:
        header, payload, signature = token.split(".")
        expected = hmac.new(self._jwt_secret, f"{header}.{payload}".encode(), hashlib.sha256).digest()
        if not hmac.compare_digest(_b64url(expected), signature):
            raise PermissionError("token not issued by this server")
        claims = json.loads(base64.urlsafe_b64decode(payload + "=" * (-len(payload) % 4)))
        if claims["exp"] < time.time():
            raise PermissionError("token expired")
        return claims

    # -- Fulcio --------------------------------------------------------------------------------

    def _issue(self, csr: x509.CertificateSigningRequest, claims: dict[str, Any]) -> x509.Certificate:
        if not csr.is_signature_valid:
            raise PermissionError("CSR signature invalid")
        repo = claims["repository"]
        signer = f"https://github.com/{claims['job_workflow_ref']}"
        now = dt.datetime.now(dt.timezone.utc).replace(microsecond=0)
        raw = {  # v1 extensions: the raw string
            "1": claims["iss"], "2": claims["event_name"], "3": claims["sha"], "4": claims["workflow"],
            "5": repo, "6": claims["ref"],
        }
        der = {  # v2 extensions: a DER UTF8String
            "8": claims["iss"], "9": signer, "10": claims["job_workflow_sha"], "11": claims["runner_environment"],
            "12": f"https://github.com/{repo}", "13": claims["sha"], "14": claims["ref"],
            "16": f"https://github.com/{claims['repository_owner']}",
            "18": f"https://github.com/{claims['workflow_ref']}", "19": claims["workflow_sha"],
            "20": claims["event_name"],
        }
        builder = (
            x509.CertificateBuilder()
            .subject_name(x509.Name([])).issuer_name(self.ca_cert.subject).public_key(csr.public_key())
            .serial_number(x509.random_serial_number())
            .not_valid_before(now - dt.timedelta(seconds=1)).not_valid_after(now + dt.timedelta(minutes=10))
            .add_extension(x509.KeyUsage(digital_signature=True, content_commitment=False, key_encipherment=False,
                                         data_encipherment=False, key_agreement=False, key_cert_sign=False,
                                         crl_sign=False, encipher_only=False, decipher_only=False), critical=True)
            .add_extension(x509.ExtendedKeyUsage([ExtendedKeyUsageOID.CODE_SIGNING]), critical=False)
            .add_extension(x509.SubjectKeyIdentifier.from_public_key(csr.public_key()), critical=False)
            .add_extension(x509.AuthorityKeyIdentifier.from_issuer_public_key(self.ca_key.public_key()), critical=False)
            .add_extension(x509.SubjectAlternativeName([x509.UniformResourceIdentifier(signer)]), critical=True)
        )
        for n, value in raw.items():
            builder = builder.add_extension(x509.UnrecognizedExtension(ObjectIdentifier(_FULCIO + n), value.encode()), critical=False)
        for n, value in der.items():
            builder = builder.add_extension(x509.UnrecognizedExtension(ObjectIdentifier(_FULCIO + n), _der_utf8(value)), critical=False)
        precert = builder.sign(self.ca_key, hashes.SHA256())
        sct = self._sct(precert.tbs_certificate_bytes, now)
        sct_list = struct.pack("!H", len(sct)) + sct
        sct_list = struct.pack("!H", len(sct_list)) + sct_list
        octets = b"\x04" + _der_len(len(sct_list)) + sct_list
        cert = builder.add_extension(x509.UnrecognizedExtension(_SCT_LIST_OID, octets), critical=False).sign(self.ca_key, hashes.SHA256())
        assert cert.tbs_precertificate_bytes == precert.tbs_certificate_bytes
        return cert

    def _sct(self, tbs: bytes, when: dt.datetime) -> bytes:
        """An RFC 6962 v1 SCT over the precertificate ``tbs``, signed by the CT log key."""
        timestamp = int(when.timestamp() * 1000)
        issuer_key_id = _key_id(self.ca_key.public_key())
        signed = struct.pack("!BBQH", 0, 0, timestamp, 1) + issuer_key_id + struct.pack("!I", len(tbs))[1:] + tbs + struct.pack("!H", 0)
        signature = self.ct_key.sign(signed, ec.ECDSA(hashes.SHA256()))
        return (struct.pack("!B", 0) + _key_id(self.ct_key.public_key()) + struct.pack("!QH", timestamp, 0)
                + struct.pack("!BBH", 4, 3, len(signature)) + signature)

    # -- Rekor ---------------------------------------------------------------------------------

    def _log_entry(self, proposed: dict[str, Any]) -> dict[str, Any]:
        body = rfc8785.dumps(proposed)
        with self.lock:
            index, size, root, proof = self.log.append(body)
        log_id = _key_id(self.log_key.public_key()).hex()
        integrated = int(time.time())
        body_b64 = base64.b64encode(body).decode()
        set_payload = rfc8785.dumps({"body": body_b64, "integratedTime": integrated, "logID": log_id, "logIndex": index})
        entry_ts = self.log_key.sign(set_payload, ec.ECDSA(hashes.SHA256()))
        origin = "rekor.test - 1"
        note = f"{origin}\n{size}\n{base64.b64encode(root).decode()}\n"
        note_sig = self.log_key.sign(note.encode(), ec.ECDSA(hashes.SHA256()))
        checkpoint = note + "\n" + f"\u2014 rekor.test {base64.b64encode(bytes.fromhex(log_id)[:4] + note_sig).decode()}\n"
        uuid = hashlib.sha256(b"\x00" + body).hexdigest()
        return {uuid: {
            "body": body_b64, "integratedTime": integrated, "logID": log_id, "logIndex": index,
            "verification": {
                "signedEntryTimestamp": base64.b64encode(entry_ts).decode(),
                "inclusionProof": {"checkpoint": checkpoint, "hashes": [h.hex() for h in proof], "logIndex": index,
                                   "rootHash": root.hex(), "treeSize": size},
            },
        }}

    # -- HTTP ----------------------------------------------------------------------------------

    def _handler(self) -> type[BaseHTTPRequestHandler]:
        server = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *args: object) -> None:
                pass

            def _send(self, status: int, data: Any) -> None:
                raw = json.dumps(data).encode()
                self.send_response(status)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(raw)))
                self.end_headers()
                self.wfile.write(raw)

            def _body(self) -> Any:
                length = int(self.headers.get("Content-Length") or 0)
                return json.loads(self.rfile.read(length) or b"null")

            def do_GET(self) -> None:
                url = urlsplit(self.path)
                server.requests.append(f"GET {url.path}")
                if url.path == "/oidc/token":
                    if self.headers.get("Authorization", "").lower() != f"bearer {server.request_token}":
                        return self._send(401, {"message": "bad request token"})
                    audience = parse_qs(url.query).get("audience", ["sigstore"])[0]
                    claims = dict(server.workflow.claims(), aud=audience)
                    return self._send(200, {"value": server.identity_token(claims)})
                self._send(404, {"message": f"no route {url.path}"})

            def do_POST(self) -> None:
                url = urlsplit(self.path)
                server.requests.append(f"POST {url.path}")
                try:
                    if url.path == "/api/v2/signingCert":
                        auth = self.headers.get("Authorization", "")
                        claims = server._check_token(auth.removeprefix("Bearer ").strip())
                        request = self._body()
                        pem = base64.b64decode(request["certificateSigningRequest"])
                        cert = server._issue(x509.load_pem_x509_csr(pem), claims)
                        chain = [c.public_bytes(serialization.Encoding.PEM).decode() for c in (cert, server.ca_cert)]
                        return self._send(201, {"signedCertificateEmbeddedSct": {"chain": {"certificates": chain}}})
                    if url.path == "/api/v1/log/entries":
                        return self._send(201, server._log_entry(self._body()))
                except PermissionError as exc:
                    return self._send(401, {"message": str(exc)})
                self._send(404, {"message": f"no route {url.path}"})

        return Handler
