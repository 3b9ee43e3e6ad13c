"""A real shoe for the display tests: the daemon run once on the virtual shoe, its
events as two displays received them (one from the start, one joining late), and
its journal for the reports."""

from __future__ import annotations

import time
from dataclasses import dataclass
from pathlib import Path

import pytest

from harness.processes import Daemon, remove_dir, short_dir

TABLE = "t1"


@dataclass
class RecordedShoe:
    base: Path
    journal: Path
    early: list[dict]  # snapshot and events of a display there from the start
    late: list[dict]  # of a display that joined mid-shoe
    joined_at: int  # results in the late display's snapshot


def until_closed(items: list[dict]) -> bool:
    return any(i.get("kind") == "shoe.closed" for i in items)


@pytest.fixture(scope="package")
def recorded_shoe():
    from shoed.net.client import TableClient

    from shoed.net.curve import ClientCurve

    base = short_dir()
    # The pit's screen shows the odds and surveillance's alarms: it reads the surveillance endpoints,
    # with the console key the embedded default allows.
    events, snapshot = f"ipc://{base}/surveillance-events", f"ipc://{base}/surveillance-snapshot"
    d = Daemon(base, "--sim-pace", "0.01", "--sim-seed", "11", "--sim-shoes", "1",
               "--surveillance-pub", events, "--surveillance-snapshot", snapshot)
    keys = base / "keys"
    curve = ClientCurve.from_files(keys / "local-console.key_secret", keys / "server.key")
    early_items: list[dict] = []
    late_items: list[dict] = []
    late = None
    try:
        early = TableClient(events, snapshot, TABLE, curve=curve)
        deadline = time.monotonic() + 90
        while not (until_closed(early_items) and late is not None and until_closed(late_items)):
            assert time.monotonic() < deadline, "the shoe did not finish"
            early_items.extend(early.poll(0.05))
            results = sum(i.get("kind") == "coup.result" for i in early_items)
            if late is None and results >= 25:
                late = TableClient(events, snapshot, TABLE, curve=curve)  # a display switched on mid-shoe
            if late is not None:
                late_items.extend(late.poll(0.05))
        early.close()
        late.close()
    finally:
        assert d.stop() == 0
    snapshot = late_items[0]
    assert snapshot["kind"] == "snapshot"
    yield RecordedShoe(base, base / "journal", early_items, late_items, len(snapshot["state"]["coups"]))
    remove_dir(base)
