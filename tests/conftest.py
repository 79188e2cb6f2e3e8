"""Shared pytest configuration: tests/ is on sys.path, so fixtures live in plain modules."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from hub_fixture import hub_server  # noqa: F401  (the local Hub-compatible server fixture)

REPO_ROOT = Path(__file__).resolve().parent.parent


@pytest.fixture(scope="session")
def repo_root() -> Path:
    return REPO_ROOT


@pytest.fixture(scope="session")
def examples_dir() -> Path:
    return REPO_ROOT / "examples"


# Tests must never talk to the real Hub.
os.environ.setdefault("HF_HUB_DISABLE_IMPLICIT_TOKEN", "1")
