"""Shared test helpers: run the real `shoed` command line in a subprocess."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest


def run_shoed(*args: str, timeout: float = 60, check: bool = False, input: str | None = None) -> subprocess.CompletedProcess:
    proc = subprocess.run(
        [sys.executable, "-m", "shoed", *args],
        capture_output=True,
        text=True,
        timeout=timeout,
        input=input,
    )
    if check and proc.returncode != 0:
        raise AssertionError(f"shoed {' '.join(args)} exited {proc.returncode}: {proc.stderr}")
    return proc


@pytest.fixture
def shoed_cli():
    return run_shoed


@pytest.fixture
def shoed_json():
    def call(*args: str):
        proc = run_shoed(*args, check=True)
        return json.loads(proc.stdout)

    return call
