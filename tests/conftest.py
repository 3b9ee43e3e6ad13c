"""Shared test helpers: run the real `shoed` command line in a subprocess; a short directory for a daemon.

The property tests (Hypothesis) draw the same examples on every run by default, so that a run's
verdict depends on the code alone; `SHOED_HYPOTHESIS=explore` draws new ones each run (with
`--hypothesis-seed=N` to repeat one), to look for what the fixed examples do not reach."""

from __future__ import annotations

import json
import os

import pytest
from hypothesis import settings

from harness.processes import remove_dir, run_shoed, short_dir  # many tests import run_shoed from here

settings.register_profile("fixed", derandomize=True, database=None)
settings.register_profile("explore")
settings.load_profile(os.environ.get("SHOED_HYPOTHESIS", "fixed"))


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
