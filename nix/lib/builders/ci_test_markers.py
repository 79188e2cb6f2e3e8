"""pytest plugin of ci-test (ci-test.nix): registers the ``kernels_ci`` marker that selects
the tests upstream's CI runs, so a kernel that does not register it itself gets no
unknown-marker warning, and no error under ``--strict-markers``."""

from __future__ import annotations

import pytest


def pytest_configure(config: pytest.Config) -> None:
    config.addinivalue_line("markers", "kernels_ci: a cheap test that kernels CI (ci-test) runs")
