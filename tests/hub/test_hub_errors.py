"""``hub.errors``: the one table from a huggingface_hub exception to a ``HubError``."""

from __future__ import annotations

import httpx2
import pytest
from huggingface_hub import errors as hf

from kernel_builder.errors import HubError
from kernel_builder.hub.errors import CONNECTION_HINT, TOKEN_HINT, describe, hub_error, is_connection_error

REQUEST = httpx2.Request("GET", "http://hub.test/api/kernels/acme/relu/refs")


def _response(status: int) -> httpx2.Response:
    return httpx2.Response(status, request=REQUEST)


def _http(status: int, server: str | None = "the server said no", cls: type = hf.HfHubHTTPError) -> Exception:
    return cls(f"{status} Client Error: for url {REQUEST.url}", response=_response(status), server_message=server)


def _dropped() -> Exception:
    try:
        raise httpx2.RemoteProtocolError("Server disconnected without sending a response.")
    except httpx2.RemoteProtocolError as inner:
        try:
            raise RuntimeError("request failed") from inner
        except RuntimeError as outer:
            return outer


class TestHubError:
    @pytest.mark.parametrize(
        ("exc", "message", "hint"),
        [
            (_http(401), "listing failed (HTTP 401): the server said no", TOKEN_HINT),
            (_http(403), "listing failed (HTTP 403): the server said no", TOKEN_HINT),
            (_http(404), "listing failed (HTTP 404): the server said no", "check the repo id, the repo type and HF_ENDPOINT"),
            (_http(409), "listing failed (HTTP 409): the server said no", "conflicting state"),
            (_http(412), "listing failed (HTTP 412): the server said no", "changed while this ran"),
            (_http(500, server=None), "listing failed (HTTP 500): 500 Client Error: for url", "server error"),
            (_http(503), "listing failed (HTTP 503): the server said no", "server error"),
            (_http(404, cls=hf.RepositoryNotFoundError), "listing failed: repository acme/relu not found on the Hub", "repo id"),
            (_http(404, cls=hf.RevisionNotFoundError), "listing failed: revision 'v9' not found in acme/relu", "kernel-builder versions acme/relu"),
            (_http(404, cls=hf.RemoteEntryNotFoundError), "listing failed: file not found in acme/relu (revision v9): 404", None),
            (hf.OfflineModeIsEnabled("offline"), "listing failed: the Hub is in offline mode (HF_HUB_OFFLINE)", "unset HF_HUB_OFFLINE"),
            (httpx2.ConnectError("refused"), "listing failed: connection lost (ConnectError: refused)", CONNECTION_HINT),
            (_dropped(), "listing failed: connection lost (RuntimeError: request failed)", CONNECTION_HINT),
            (ValueError("odd answer"), "listing failed: odd answer", "HF_ENDPOINT"),
        ],
    )
    def test_each_failure_reads_the_same_everywhere(self, exc: Exception, message: str, hint: str | None) -> None:
        error = hub_error(exc, "listing", repo_id="acme/relu", revision="v9")
        assert isinstance(error, HubError) and error.exit_code == 6
        assert error.message.startswith(message), error.message
        if hint is None:
            assert error.hint is None
        else:
            assert error.hint is not None and hint in error.hint, error.hint

    def test_a_caller_hint_wins(self) -> None:
        assert hub_error(_http(412), "committing", hint="rerun the upload").hint == "rerun the upload"

    def test_the_connection_hint_replaces_only_the_lost_connection_one(self) -> None:
        assert hub_error(_dropped(), "committing", connection_hint="rerun me").hint == "rerun me"
        assert hub_error(_http(500), "committing", connection_hint="rerun me").hint != "rerun me"

    def test_offline_mode_is_not_a_lost_connection(self) -> None:
        failure = describe(hf.OfflineModeIsEnabled("offline"))
        assert not failure.lost and "offline" in failure.reason


class TestIsConnectionError:
    @pytest.mark.parametrize(
        "exc", [ConnectionResetError(), TimeoutError(), httpx2.ReadTimeout("slow"), httpx2.RemoteProtocolError("eof"), _dropped()]
    )
    def test_transport_failures(self, exc: BaseException) -> None:
        assert is_connection_error(exc)

    @pytest.mark.parametrize("exc", [_http(500), ValueError("x"), OSError("disk")])
    def test_answers_are_not(self, exc: BaseException) -> None:
        assert not is_connection_error(exc)
