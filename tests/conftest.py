"""Shared test helpers: run the real `shoed` command line in a subprocess; a short directory for a daemon."""

from __future__ import annotations

import json

import pytest

from harness.processes import remove_dir, run_shoed, short_dir  # many tests import run_shoed from here


@pytest.fixture
def shoed_cli():
    return run_shoed


@pytest.fixture
def shoed_json():
    def call(*args: str):
        proc = run_shoed(*args, check=True)
        return json.loads(proc.stdout)

    return call


@pytest.fixture
def base():
    """A short private directory for a daemon's ipc sockets, journal and keys (harness/processes.py),
    removed afterwards."""
    path = short_dir()
    yield path
    remove_dir(path)
