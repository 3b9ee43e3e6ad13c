"""The controller's shortcuts for a fast replay give exactly what the plain way gives:
the time written as datetime writes it, the dispatch of every kind of input, and the
test for whether a checkpoint can be taken."""

import datetime as dt
import random

import pytest

from shoed.rules.ruleset import load_ruleset
from shoed.table import TableController, utc_text
from tests.test_table import dealer_inputs


def datetime_text(utc_ns: int) -> str:
    """How the events' time was written before: the reference."""
    return dt.datetime.fromtimestamp(utc_ns / 1e9, dt.UTC).isoformat(timespec="microseconds").replace("+00:00", "Z")


def outcome(fn, utc_ns):
    try:
        return fn(utc_ns)
    except (ValueError, OverflowError) as exc:  # out of datetime's range: the same error
        return type(exc).__name__


def test_utc_text_is_what_datetime_writes():
    rng = random.Random(1)
    values = [0, 1, -1, 999, 500, -500, 1_500, 2_500, 1_700_000_000_000_000_000, 253_402_300_799_999_999_000,
              253_402_300_800 * 10**9, 10**30]
    values += [rng.randrange(-6 * 10**18, 253_402_300_799 * 10**9) for _ in range(20_000)]
    # Half a microsecond either way of a whole one: the float's rounding decides, as in datetime.
    values += [1_790_000_000_000_000_000 + k * 500 + d for k in range(-2_000, 2_000) for d in (-1, 0, 1)]
    values += [k * 1_000 + 500 for k in range(-2_000, 2_000)]
    # Where the time is formatted from whole numbers (up to 2038, a quarter microsecond and more from a
    # half): at its edges, with nanoseconds that put the float nearest to rounding the other way.
    edge = 2**31 * 10**9
    for micros in [rng.randrange(0, edge // 1_000) for _ in range(3_000)] + [edge // 1_000 - 1, edge // 1_000]:
        values += [micros * 1_000 + rest for rest in (0, 1, 249, 250, 251, 499, 501, 749, 750, 751, 999)]
    for utc_ns in values:
        assert outcome(utc_text, utc_ns) == outcome(datetime_text, utc_ns), utc_ns


@pytest.mark.parametrize("kind", [None, 7, "bogus", ["card"], {"k": 1}, "_on_card"])
def test_an_input_of_no_known_kind_raises_an_alarm(kind):
    table = TableController("t1", load_ruleset("punto-banco"), 6)
    (event,) = table.feed({"kind": kind, "mono_ns": 1, "utc_ns": 2}).events
    assert event["kind"] == "alarm" and event["alarm"] == "unknown_input"
    assert event["text"] == f"unknown input kind {kind!r}"


def test_checkpointable_says_whether_a_checkpoint_can_be_taken():
    table = TableController("t1", load_ruleset("punto-banco"), 6)
    states = []
    for item in dealer_inputs(coups=2) + [{"kind": "shoe_removed", "mono_ns": 9, "utc_ns": 9}]:
        table.feed(item)
        try:
            table.checkpoint()
            taken = True
        except ValueError:
            taken = False
        assert table.checkpointable == taken
        states.append(taken)
    assert states[0] and not states[5] and states[-1]  # fresh shoe; cards seen; shoe closed
