"""Fixtures for the network tests: a ZeroMQ context, keys (short ipc directories: `base`, tests/conftest.py)."""

from __future__ import annotations

import pytest
import zmq

from .helpers import Keys


@pytest.fixture
def ctx():
    context = zmq.Context()
    yield context
    context.destroy(linger=0)


@pytest.fixture(scope="session")
def keys(tmp_path_factory) -> Keys:
    return Keys(tmp_path_factory.mktemp("keys"))
