"""The driver interface: Readings as the daemon journals them."""

from __future__ import annotations

import json
import logging

import pytest

from shoed.drivers.base import Reading
from shoed.drivers.beetek import BeeTekDriver


def test_a_reading_round_trips_through_json():
    r = Reading(kind="card", source="native:/dev/ttyACM0", raw=b"\x04\x01\x10\x00", offset=17, mono_ns=5, utc_ns=6,
                card="TD", mode="burn", confidence=0.98, faced=True, shoe_seq=5, detail={"boot": 7})
    data = json.loads(json.dumps(r.to_json()))
    assert data["raw"] == "04011000" and data["card"] == "TD" and data["faced"] is True
    assert "button" not in data and "link" not in data  # unset fields are left out
    assert Reading.from_json(data) == r


@pytest.mark.parametrize(
    "fields, message",
    [
        ({"kind": "cards"}, "unknown reading kind"),
        ({"kind": "card", "mode": "practice", "card": "TD"}, "unknown mode"),
        ({"kind": "card"}, "needs its card"),
    ],
)
def test_a_malformed_reading_is_refused(fields, message):
    with pytest.raises(ValueError, match=message):
        Reading(source="x", raw=b"", offset=0, mono_ns=0, utc_ns=0, **fields)


def test_a_shoe_without_a_gate_says_so_once(caplog):
    driver = BeeTekDriver("/dev/null-shoe")
    with caplog.at_level(logging.WARNING, logger="shoed.drivers.base"):
        driver.set_gate(True)
        driver.set_gate(False)
    assert len([rec for rec in caplog.records if "no card gate" in rec.getMessage()]) == 1
