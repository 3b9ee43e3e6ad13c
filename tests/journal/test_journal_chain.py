"""The hash chain's pure core: canonical form, sealing, checking one line.

table-game-standards.md item 18: "Hash chain each record to the one before
it"; item 5: "an uncorrectable corruption of critical data stops play rather
than guessing", so every altered byte must be caught.
"""

from __future__ import annotations

from datetime import UTC, datetime

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from shoed.journal import chain as ch

# -- canonical form -------------------------------------------------------

CANONICAL = [
    # (value, canonical bytes, why)
    ({"b": 1, "a": 2}, b'{"a":2,"b":1}', "keys sorted"),
    ({"Z": 1, "a": 2, "\u00e9": 3}, b'{"Z":1,"a":2,"\xc3\xa9":3}', "sorted by code point, UTF-8 unescaped"),
    ({"a": [1, 2, {"d": None, "c": True}]}, b'{"a":[1,2,{"c":true,"d":null}]}', "nested objects sorted, no spaces"),
    ({"t": 'say "TD"\n'}, b'{"t":"say \\"TD\\"\\n"}', "quotes and control characters escaped"),
    ({"f": 0.1, "g": 1e16, "h": -0.0}, b'{"f":0.1,"g":1e16,"h":-0.0}', "shortest round-trip floats"),
    ({"n": 2**70}, b'{"n":1180591620717411303424}', "big integers exact"),
]


@pytest.mark.parametrize("value, expected, why", CANONICAL, ids=[c[2] for c in CANONICAL])
def test_canonical_form(value, expected, why):
    assert ch.canonical(value) == expected


# -- what a record may hold -----------------------------------------------

REFUSED = [
    (["kind", "x"], "a record is a dict"),
    ({"card": "TD"}, "needs a non-empty string 'kind'"),
    ({"kind": ""}, "needs a non-empty string 'kind'"),
    ({"kind": "x", "hash": "0"}, "sets hash itself"),
    ({"kind": "x", "jseq": 3, "prev": "a"}, "sets jseq, prev itself"),
    ({"kind": "x", "t": float("nan")}, "has no JSON form"),
    ({"kind": "x", "t": [float("inf")]}, "has no JSON form"),
    ({"kind": "x", "m": {1: "TD"}}, "is not a string"),
    ({"kind": "x", "raw": b"\x02TD"}, "bytes is not a JSON value"),
    ({"kind": "x", "at": datetime(2024, 1, 1, tzinfo=UTC)}, "datetime is not a JSON value"),
    ({"kind": "x", "cards": {"TD"}}, "set is not a JSON value"),
]


@pytest.mark.parametrize("record, message", REFUSED)
def test_records_the_journal_refuses(record, message):
    with pytest.raises(ch.RecordError, match=message):
        ch.seal(record, 2, ch.GENESIS, None)


# -- sealing and checking -------------------------------------------------

json_values = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False, allow_infinity=False) | st.text(),
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=8), inner, max_size=4),
    max_leaves=12,
)
records = st.dictionaries(st.text(max_size=8).filter(lambda k: k not in ch.RESERVED), json_values, max_size=6).map(
    lambda d: {**d, "kind": "reading"}
)


@settings(max_examples=300, deadline=None)
@given(record=records, secret=st.one_of(st.none(), st.binary(min_size=1, max_size=32)))
def test_a_sealed_record_reads_back_intact_and_equal(record, secret):
    sealed, line = ch.seal(record, 2, "ab" * 32, secret)
    assert line.endswith(b"\n") and line.count(b"\n") == 1
    back, reason = ch.check_line(line[:-1], secret, first=False)
    assert reason is None
    assert back == sealed


def test_the_hash_covers_the_record_its_number_and_its_link():
    sealed, _ = ch.seal({"kind": "reading", "card": "TD"}, 2, ch.GENESIS, None)
    assert sealed["jseq"] == 2 and sealed["prev"] == ch.GENESIS
    body = {k: v for k, v in sealed.items() if k != "hash"}
    assert sealed["hash"] == ch.digest(ch.canonical(body), None)
    other, _ = ch.seal({"kind": "reading", "card": "TD"}, 3, ch.GENESIS, None)
    assert other["hash"] != sealed["hash"]


def test_a_keyed_hash_differs_with_the_key():
    plain, _ = ch.seal({"kind": "reading"}, 2, ch.GENESIS, None)
    keyed, _ = ch.seal({"kind": "reading"}, 2, ch.GENESIS, b"secret kept off the box")
    other, _ = ch.seal({"kind": "reading"}, 2, ch.GENESIS, b"another secret")
    assert len({plain["hash"], keyed["hash"], other["hash"]}) == 3


@pytest.mark.parametrize("mask", [0x01, 0x20, 0x80])
def test_every_flipped_byte_of_a_line_is_caught(mask):
    # 0x20 turns 1e16 into 1E16 (same value) and 'a' into 'A'; 0x80 breaks UTF-8.
    _, line = ch.seal(
        {"kind": "reading", "card": "TD", "f": 1e16, "t": "Baccarat \u00e9", "n": [1, 2, None, True]},
        2,
        "cd" * 32,
        None,
    )
    body = line[:-1]
    for i in range(len(body)):
        altered = bytearray(body)
        altered[i] ^= mask
        _, reason = ch.check_line(bytes(altered), None, first=False)
        assert reason is not None, f"byte {i} ({chr(body[i])!r}) ^ {mask:#x} was not caught"


LINE_FAULTS = [
    (b"", "empty line"),
    (b'{"kind":"reading"', "not valid JSON"),
    (b"[1,2]", "not a JSON object"),
    (b'{"hash":"00","jseq":2,"kind":"x","prev":"00"}', "hash does not match"),
    (b'{"jseq":2,"kind":"x","prev":"00"}', "hash, prev or kind missing"),
    (b'{"hash": "00","jseq":2,"kind":"x","prev":"00"}', "not in canonical form"),
    (b'{"hash":"00","jseq":2,"kind":"x","prev":"00","z":{"a":1,"hash":"00","i":2}}', "hash does not match"),
    (b"\x00\x00\x00\x00", "not valid JSON"),
]


def test_a_line_is_hashed_over_its_own_bytes_without_the_hash_member():
    sealed, line = ch.seal({"kind": "reading", "card": "TD", "z": {"hash": "ab"}}, 2, "cd" * 32, None)
    body = {k: v for k, v in sealed.items() if k != "hash"}
    assert line[:-1].replace(b'"hash":"' + sealed["hash"].encode() + b'",', b"") == ch.canonical(body)
    assert ch.check_line(line[:-1], None, first=False) == (sealed, None)


@pytest.mark.parametrize("line, reason", LINE_FAULTS)
def test_lines_that_are_not_records(line, reason):
    _, why = ch.check_line(line, None, first=False)
    assert reason in why


@pytest.mark.parametrize("secret", [None, b"secret kept off the box"])
def test_a_hash_member_moved_within_its_line_is_caught(secret):
    """The line less the member is what was hashed wherever the member sits: the member must sit where the
    sorted keys put it (before jseq), else the line must be its record's canonical form, which it is not."""
    import re

    _, line = ch.seal({"kind": "reading", "card": "TD", "a": 1}, 2, "cd" * 32, secret)
    member = re.search(rb'"hash":"[0-9a-f]{64}",', line).group(0)
    moved = b"{" + member + line[1:-1].replace(member, b"")
    assert moved != line[:-1] and len(moved) == len(line) - 1
    _, why = ch.check_line(moved, secret, first=False)
    assert why == "not in canonical form (a byte was altered)"


def test_a_line_too_long_for_any_record_is_not_parsed():
    import tracemalloc

    padded = b'{"events":[' + b"{}," * (2 * ch.RECORD_MAX // 3) + b'{}],"hash":"00","jseq":2,"kind":"step","prev":"00"}'
    tracemalloc.start()
    _, why = ch.check_line(padded, None, first=False)
    assert ch.check_step_line(padded, ch.step_hasher(None)) is None
    peak = tracemalloc.get_traced_memory()[1]
    tracemalloc.stop()
    assert why.startswith(f"a line of {len(padded):,} bytes: no record of the journal's form comes near 4 MiB")
    assert peak < 1_000_000  # nothing parsed: parsed, the line's objects take about 28 times its size


# -- headers and files -----------------------------------------------------


def test_file_names_sort_in_chain_order_even_if_the_clock_steps_back():
    late = datetime(2024, 5, 1, 23, 0, tzinfo=UTC)
    early = datetime(2024, 5, 1, 1, 0, tzinfo=UTC)
    names = [ch.file_name("T1", 9, late, "S9"), ch.file_name("T1", 10, early, "S10")]
    assert sorted(names) == names
    assert names[0] == "T1-000009-20240501T230000Z-S9.jsonl"
    assert ch.parse_file_name(names[1]) == ch.FileName("T1", 10, "20240501T010000Z", "S10")


@pytest.mark.parametrize(
    "table, shoe, parsed_shoe",
    [("T1", "S1", "S1"), ("mini-bac.3", "shoe 7/a", "shoe_7_a"), ("T-000001", "x-000002-20240101T000000Z-y", None)],
)
def test_file_names_parse_back(table, shoe, parsed_shoe):
    name = ch.file_name(table, 1, datetime(2024, 5, 1, tzinfo=UTC), shoe)
    parsed = ch.parse_file_name(name)
    assert parsed.table == table and parsed.file_seq == 1
    if parsed_shoe is not None:
        assert parsed.shoe == parsed_shoe


def test_a_file_walks_until_the_first_record_that_does_not_link():
    head, l1 = ch.seal(
        ch.header(table="T1", shoe="S1", file_seq=1, prev_file=None, opened_utc="x", keyed=False), 1, ch.GENESIS, None
    )
    r2, l2 = ch.seal({"kind": "reading"}, 2, head["hash"], None)
    _, l3 = ch.seal({"kind": "reading"}, 3, head["hash"], None)  # links past r2
    items = list(ch.chain(l1 + l2 + l3, prev=ch.GENESIS, secret=None))
    assert items[:2] == [head, r2]
    assert items[2] == ch.Bad(3, len(l1 + l2), 3, "prev does not link to the record before it")


def test_a_header_is_line_one_only():
    head, l1 = ch.seal(
        ch.header(table="T1", shoe="S1", file_seq=1, prev_file=None, opened_utc="x", keyed=False), 1, ch.GENESIS, None
    )
    _again, l2 = ch.seal(
        ch.header(table="T1", shoe="S1", file_seq=1, prev_file=None, opened_utc="x", keyed=False), 2, head["hash"], None
    )
    bad = list(ch.chain(l1 + l2, prev=None, secret=None))[-1]
    assert isinstance(bad, ch.Bad) and "after line 1" in bad.reason


# -- the quick check every append takes agrees with the one that names the fault --------

any_values = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats() | st.text(max_size=3) | st.binary(max_size=2)
    | st.sets(st.integers(), max_size=2) | st.datetimes(),
    lambda inner: st.lists(inner, max_size=3) | st.tuples(inner, inner)
    | st.dictionaries(st.text(max_size=3) | st.integers(), inner, max_size=3),
    max_leaves=10,
)


@settings(max_examples=400, deadline=None)
@given(any_values)
def test_the_quick_check_never_passes_what_the_full_check_refuses(value):
    try:
        ch._check_value(value, "record")
        refused = False
    except ch.RecordError:
        refused = True
    if refused:
        assert not ch._plain(value)
    else:  # what the full check passes is plain, unless a subclass of a plain type is in it (none here)
        assert ch._plain(value)


def test_subclasses_of_plain_types_take_the_full_check_and_are_sealed():
    import enum

    class Side(enum.StrEnum):
        PLAYER = "player"

    record = {"kind": "x", "side": Side.PLAYER, "n": True}
    assert not ch._plain(record)
    sealed, line = ch.seal(record, 2, ch.GENESIS, None)
    assert b'"side":"player"' in line
