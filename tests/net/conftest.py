"""Fixtures for the network tests: a ZeroMQ context, short ipc directories, keys."""

from __future__ import annotations

import shutil
import tempfile
from pathlib import Path

import pytest
import zmq

from .helpers import Keys


@pytest.fixture
def ctx():
    context = zmq.Context()
    yield context
    context.destroy(linger=0)


@pytest.fixture
def short_dir():
    """A short directory for ipc:// endpoints (socket paths are limited to ~100 bytes)."""
    path = tempfile.mkdtemp(prefix="shoed-net-", dir="/tmp")
    yield Path(path)
    shutil.rmtree(path, ignore_errors=True)


@pytest.fixture(scope="session")
def keys(tmp_path_factory) -> Keys:
    return Keys(tmp_path_factory.mktemp("keys"))
