"""The one place an ``HfApi`` is made, and Hub errors turned into ``HubError``.

The endpoint comes from the argument, else ``HF_ENDPOINT``, else huggingface.co. The token
comes from the argument; for publishing a missing one is looked up (``HF_TOKEN``, the saved
login) and passed explicitly so ``HF_HUB_DISABLE_IMPLICIT_TOKEN`` does not drop it, while the
loader's reads leave it to huggingface_hub, which honours that variable. The token is handed
to ``HfApi`` and never printed, logged or put in a message.
"""

from __future__ import annotations

import os
from typing import TYPE_CHECKING

from kernel_builder.errors import HubError

if TYPE_CHECKING:
    from huggingface_hub import HfApi

__all__ = ["make_api", "hub_error", "repo_url", "is_connection_error", "RETRY_HINT"]

RETRY_HINT = (
    "the connection to the Hub was lost; check the network (and HF_ENDPOINT), then rerun: "
    "`kernel-builder upload` compares with the Hub and sends only what is missing"
)

DEFAULT_ENDPOINT = "https://huggingface.co"
URL_PREFIX = {"model": "", "dataset": "datasets/", "space": "spaces/", "kernel": "kernels/"}


def make_api(
    endpoint: str | None = None,
    token: str | bool | None = None,
    *,
    user_agent: str | dict[str, str] | None = None,
    implicit_token: bool = False,
) -> HfApi:
    """An ``HfApi`` for ``endpoint`` (default: ``HF_ENDPOINT`` or huggingface.co).

    ``user_agent`` is added to kernel-builder's own (an empty one is dropped: it would make
    an illegal header). With ``implicit_token`` a missing token is left to huggingface_hub.
    """
    from huggingface_hub import HfApi, get_token

    from kernel_builder import __version__

    endpoint = endpoint or os.environ.get("HF_ENDPOINT") or DEFAULT_ENDPOINT
    if not implicit_token:
        # Passed explicitly so that publishing sends it even where implicit tokens are off.
        token = token or get_token()
    if isinstance(user_agent, str) and not user_agent.strip():
        user_agent = None
    return HfApi(
        endpoint=endpoint.rstrip("/"),
        token=token,
        library_name="kernel-builder",
        library_version=__version__,
        user_agent=user_agent or None,
    )


def repo_url(endpoint: str, repo_type: str, repo_id: str, branch: str | None = None) -> str:
    """The web URL of a repo (or of one branch's tree)."""
    url = f"{endpoint.rstrip('/')}/{URL_PREFIX[repo_type]}{repo_id}"
    return f"{url}/tree/{branch}" if branch else url


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
        module = type(current).__module__.split(".")[0]
        if module in ("httpx", "httpx2", "httpcore", "httpcore2", "h11", "requests", "urllib3"):
            names = {c.__name__ for c in type(current).__mro__}
            if names & {"TransportError", "ConnectionError", "RemoteProtocolError", "ProtocolError", "TimeoutException",
                        "NetworkError", "Timeout"}:
                return True
        current = current.__cause__ or current.__context__
    return False


def hub_error(exc: Exception, what: str, *, hint: str | None = None) -> HubError:
    """A ``HubError`` for a failed Hub call: ``what`` names the action, repo and branch."""
    from huggingface_hub.errors import HfHubHTTPError

    if is_connection_error(exc):
        detail = str(exc).strip().splitlines()[:1] or [type(exc).__name__]
        return HubError(f"{what} failed: connection lost ({type(exc).__name__}: {detail[0][:200]})", hint=hint or RETRY_HINT)

    status = None
    detail = str(exc).strip().splitlines()
    if isinstance(exc, HfHubHTTPError) and exc.response is not None:
        status = exc.response.status_code
        server = exc.server_message or ""
        detail = [line for line in (server.strip(), *(detail[:1] if not server else ())) if line]
    summary = "; ".join(dict.fromkeys(d for d in detail if d))[:500]
    status_text = f" (HTTP {status})" if status else ""
    if hint is None and status in (401, 403):
        hint = "check that your token (HF_TOKEN or `hf auth login`) can write to this repo or organization"
    return HubError(f"{what} failed{status_text}: {summary or type(exc).__name__}", hint=hint)
