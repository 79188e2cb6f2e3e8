"""The one table from a failed Hub call to a ``HubError``: what failed, why, what to do.

Every Hub call in ``hub/`` hands the exception it caught to ``hub_error`` (or, for a
sentence of its own, to ``describe``), so the same failure reads the same whether the
loader or ``upload`` met it: offline mode, a lost connection (with a retry hint), a missing
repository, revision or file, and an HTTP status with the server's message. The token is
never part of a message: huggingface_hub's exception texts do not carry it.
"""

from __future__ import annotations

import attrs

from kernel_builder.errors import HubError

__all__ = ["Failure", "describe", "hub_error", "is_connection_error", "CONNECTION_HINT", "TOKEN_HINT"]

CONNECTION_HINT = "the connection to the Hub was lost; check the network (and HF_ENDPOINT), then rerun"
TOKEN_HINT = (
    "check that your token (HF_TOKEN or `hf auth login`) has access to this repo or organization "
    "(publishing needs write access)"
)
OFFLINE_HINT = "unset HF_HUB_OFFLINE to reach the Hub, or use what is already in the cache"
_STATUS_HINTS = {
    401: TOKEN_HINT,
    403: TOKEN_HINT,
    404: "check the repo id, the repo type and HF_ENDPOINT",
    409: "the repo or branch is in a conflicting state (it exists already, or changed meanwhile); check it and rerun",
    412: "the repo changed while this ran (a concurrent push); nothing was written, rerun",
    429: "the Hub is rate-limiting requests; wait a little, then rerun",
}
_SERVER_HINT = "the Hub had a server error; try again later"
_OTHER_HINT = "check your network and HF_ENDPOINT"
_TRANSPORT_MODULES = ("httpx", "httpx2", "httpcore", "httpcore2", "h11", "requests", "urllib3")
_TRANSPORT_CLASSES = frozenset(
    {"TransportError", "ConnectionError", "RemoteProtocolError", "ProtocolError", "TimeoutException", "NetworkError", "Timeout"}
)


@attrs.frozen
class Failure:
    """Why a Hub call failed, in words; ``status`` only for an HTTP error the reason does not name."""

    reason: str
    hint: str | None = None
    status: int | None = None
    lost: bool = False  # no answer came back: the request may or may not have been applied

    def after(self, what: str) -> str:
        """``<what>[ (HTTP n)]: <reason>``, the one sentence shape of every Hub error."""
        status = f" (HTTP {self.status})" if self.status else ""
        return f"{what}{status}: {self.reason}"


def is_connection_error(exc: BaseException) -> bool:
    """Whether ``exc`` (or what caused it) is a transport failure: no HTTP answer came back.

    huggingface_hub lets the HTTP client's errors through (``RemoteProtocolError`` when
    the server closes the socket, connect and read errors, timeouts).
    """
    seen: set[int] = set()
    current: BaseException | None = exc
    while current is not None and id(current) not in seen:
        seen.add(id(current))
        if isinstance(current, (ConnectionError, TimeoutError)):
            return True
        if type(current).__module__.split(".")[0] in _TRANSPORT_MODULES:
            if {c.__name__ for c in type(current).__mro__} & _TRANSPORT_CLASSES:
                return True
        current = current.__cause__ or current.__context__
    return False


def _first_line(exc: BaseException) -> str:
    lines = str(exc).strip().splitlines()
    return lines[0][:200] if lines else ""


def _http_detail(exc: BaseException) -> str:
    """The server's message when it sent one, else the first line of the exception."""
    server = (getattr(exc, "server_message", None) or "").strip()
    detail = [server] if server else str(exc).strip().splitlines()[:1]
    return "; ".join(dict.fromkeys(d for d in detail if d))[:500]


def describe(exc: BaseException, *, repo_id: str | None = None, revision: str | None = None) -> Failure:
    """Map one exception from a Hub call to a ``Failure`` (subclasses before their parents)."""
    from huggingface_hub import errors  # lazy: pulls in httpx (~70 ms); the loader imports hub/ at start-up

    repo = repo_id or "the repository"
    rev = f" (revision {revision})" if revision else ""
    if isinstance(exc, errors.OfflineModeIsEnabled):
        return Failure("the Hub is in offline mode (HF_HUB_OFFLINE)", OFFLINE_HINT)
    if is_connection_error(exc):
        first = _first_line(exc)
        return Failure(f"connection lost ({type(exc).__name__}{': ' + first if first else ''})", CONNECTION_HINT, lost=True)
    if isinstance(exc, errors.GatedRepoError):
        return Failure(f"{repo} is gated", "request access on its Hub page, then use a token of that account")
    if isinstance(exc, errors.RepositoryNotFoundError):
        return Failure(f"repository {repo} not found on the Hub", "check the repo id and your token")
    if isinstance(exc, errors.RevisionNotFoundError):
        return Failure(
            f"revision {revision!r} not found in {repo}", f"list versions with `kernel-builder versions {repo_id or 'REPO'}`"
        )
    if isinstance(exc, errors.EntryNotFoundError):
        return Failure(f"file not found in {repo}{rev}: {_first_line(exc)}")
    response = getattr(exc, "response", None)
    if isinstance(exc, errors.HfHubHTTPError) and response is not None:
        status = response.status_code
        hint = _STATUS_HINTS.get(status) or (_SERVER_HINT if status >= 500 else None)
        return Failure(_http_detail(exc) or type(exc).__name__, hint, status)
    return Failure(_first_line(exc) or type(exc).__name__, _OTHER_HINT)


def hub_error(
    exc: BaseException,
    what: str,
    *,
    repo_id: str | None = None,
    revision: str | None = None,
    hint: str | None = None,
    connection_hint: str | None = None,
) -> HubError:
    """``HubError("<what> failed[ (HTTP n)]: <reason>")`` for a failed Hub call.

    ``what`` names the action with its repo and branch; ``hint`` replaces the table's hint,
    ``connection_hint`` only the one for a lost connection (``upload`` says what a rerun does).
    """
    failure = describe(exc, repo_id=repo_id, revision=revision)
    default = connection_hint if failure.lost and connection_hint else failure.hint
    return HubError(failure.after(f"{what} failed"), hint=hint or default)

