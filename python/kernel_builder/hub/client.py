"""The one place an ``HfApi`` is made (Hub errors become ``HubError`` in ``hub.errors``).

The endpoint comes from the argument, else ``HF_ENDPOINT``, else huggingface.co. The token
comes from the argument; for publishing a missing one is looked up (``HF_TOKEN``, the saved
login) and passed explicitly so ``HF_HUB_DISABLE_IMPLICIT_TOKEN`` does not drop it, while the
loader's reads leave it to huggingface_hub, which honours that variable. The token is handed
to ``HfApi`` and never printed, logged or put in a message.
"""

from __future__ import annotations

import os
from typing import TYPE_CHECKING

from kernel_builder import __version__

if TYPE_CHECKING:
    from huggingface_hub import HfApi

__all__ = ["make_api", "repo_url"]

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
    from huggingface_hub import HfApi, get_token  # lazy: pulls in httpx; the loader imports this module at start-up

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
