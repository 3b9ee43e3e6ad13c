"""A shuffle_started naming decks no shuffler holds (a hostile, chain-intact journal): the shuffle is
invalid from its start, and nothing is looked for per deck."""

from __future__ import annotations

import pytest

from firmware_protocol.messages import DECKS_MAX
from tests.test_table_shuffler import KEY, Feed, as_the_driver_gives


@pytest.mark.parametrize("decks", [0, DECKS_MAX + 1, 10**12, None, "6"])
def test_a_shuffle_of_decks_no_shuffler_holds_is_invalid_from_its_start(decks):
    # A shuffle_started naming decks outside 1..DECKS_MAX (a hostile journal): invalid at once, its
    # order never taken, and no deck of it looked for, whatever the number.
    feed = Feed()
    feed("shuffle_started", source="shuffler", detail={"boot": 7, "shuffle": 4, "decks": decks})
    (invalid,) = feed.alarms("shuffle_order_invalid")
    assert f"not 1 to {DECKS_MAX}" in invalid["text"]
    feed("order_chunk", source="shuffler", detail=as_the_driver_gives("order_chunk", {
        "boot": 7, "shuffle": 4, "position": 0, "cards": ["2S", "3S"]}, KEY))
    feed("shuffle_completed", source="shuffler",
         detail=as_the_driver_gives("shuffle_completed", {"boot": 7, "shuffle": 4, "cards": 0, "shoe": 1,
                                                          "digest": "00" * 32}, KEY))
    (completed,) = [e for e in feed.events if e["kind"] == "shuffle.completed"]
    assert completed["verified"] is False and completed["problems"] == [invalid["text"].split(": ", 1)[1]]
    assert feed.table.shuffler.pending[-1]["order"] == []
