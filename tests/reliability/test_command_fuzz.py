"""Property tests of the command path: the request decoder and the table controller's commands.

The wire decoders already have theirs (tests/firmware_protocol/test_wire_fuzz.py
for the native frames, tests/drivers/test_beetek_fuzz.py for the Bee-Tek
tokens). Here:

- `shoed.net.commands.parse_request` on random bytes, on random JSON shaped
  like requests, and on valid requests with bytes flipped or cut: it returns a
  known command with arguments of the right shape, or refuses with
  `CommandRejected`; nothing else ever comes out of it;
- any command the decoder lets through, sent at any moment of a dealt shoe,
  is either carried out or refused with a reply: the controller never raises,
  `seq` stays strictly increasing, and the inputs replay to the same events
  (what the journal's replay at restart relies on).

SHOED_FUZZ_EXAMPLES=5000 for a longer run (test labs, before a release).
"""

from __future__ import annotations

import json
import os

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from shoed.net import commands as cm
from shoed.net.commands import COMMANDS, CommandRejected, parse_request

EXAMPLES = int(os.environ.get("SHOED_FUZZ_EXAMPLES", "150"))
SETTINGS = settings(max_examples=EXAMPLES, deadline=None, suppress_health_check=[HealthCheck.too_slow])

NAMES = sorted(COMMANDS)
ARG_NAMES = ["decks", "reason", "misdeal", "side", "draw", "card", "coup", "force"]
scalars = st.one_of(
    st.none(), st.booleans(), st.integers(-(2**70), 2**70), st.floats(allow_nan=False, allow_infinity=False),
    st.text(max_size=20), st.sampled_from(NAMES + ["player", "banker", "tie", "9H", "10H", "TD", "H3", "ZZ", ""]),
)
json_values = st.recursive(scalars, lambda inner: st.one_of(
    st.lists(inner, max_size=4), st.dictionaries(st.sampled_from(ARG_NAMES) | st.text(max_size=6), inner, max_size=4)),
    max_leaves=12)
requests = st.fixed_dictionaries(
    {}, optional={"cmd": st.sampled_from(NAMES) | json_values, "args": st.dictionaries(
        st.sampled_from(ARG_NAMES), json_values, max_size=3) | json_values, "id": json_values,
        "extra": json_values})


# Found by these tests: msgspec lets RecursionError (very deep nesting) and UnicodeDecodeError
# (bad UTF-8 inside a key) out of its decoder; parse_request now refuses both.
KNOWN_ESCAPES = ()  # none any more: parse_request refuses both


def check(body: bytes):
    """parse_request's whole contract: a known command with its shape, or CommandRejected."""
    try:
        name, args, request_id = parse_request(body)
    except CommandRejected as exc:
        assert str(exc)
        return None
    except KNOWN_ESCAPES:
        return None
    assert name in COMMANDS
    assert isinstance(args, dict) and set(args) <= set(COMMANDS[name].args.__struct_fields__)
    assert request_id is None or isinstance(request_id, int) and not isinstance(request_id, bool) \
        or isinstance(request_id, str) and len(request_id) <= 128
    # What was accepted is accepted again, the same, when sent back in its own words.
    again = parse_request(cm.wire.encode({"cmd": name, "args": args, "id": request_id}))
    assert again == (name, args, request_id)
    return name, args


@SETTINGS
@given(st.binary(max_size=2000))
def test_random_bytes_are_refused_or_a_known_command(body):
    check(body)


@SETTINGS
@given(requests)
def test_request_shaped_json_is_refused_or_a_known_command_of_the_right_shape(request):
    check(json.dumps(request).encode())


valid = st.sampled_from([
    b'{"cmd": "status"}', b'{"cmd": "confirm", "args": {}, "id": 7}', b'{"cmd": "void", "args": {"reason": "x"}}',
    b'{"cmd": "decide", "args": {"side": "player", "draw": true}}', b'{"cmd": "enter_card", "args": {"card": "9H"}}',
    b'{"cmd": "burn_card", "args": {"misdeal": 3}, "id": "abc"}', b'{"cmd": "open_shoe", "args": {"decks": 8}}',
])


@SETTINGS
@given(valid, st.lists(st.tuples(st.integers(0, 200), st.integers(0, 7)), max_size=4), st.integers(0, 200))
def test_valid_requests_with_flipped_bits_or_cut_short(body, flips, cut):
    data = bytearray(body)
    for where, bit in flips:
        data[where % len(data)] ^= 1 << bit
    check(bytes(data))
    check(bytes(data[: cut % (len(data) + 1)]))


def test_bad_utf8_in_a_key_is_refused():
    with pytest.raises(CommandRejected):
        parse_request(b'{"\xe3md": "status"}')


def test_deeply_nested_json_is_refused():
    with pytest.raises(CommandRejected):
        parse_request(b'{"cmd": "status", "args": ' + b'{"a": ' * 5000 + b"1" + b"}" * 5001)


def shoe_inputs(ruleset: str, seed: int) -> list[dict]:
    from shoed.rules.ruleset import load_ruleset
    from shoed.simulate.dealer import DealSetup, deal
    from harness.records import controller_inputs

    return controller_inputs(list(deal(DealSetup(load_ruleset(ruleset), seed=seed, shoes=1))))


SHOES = {name: shoe_inputs(name, 3) for name in ("punto-banco", "baccarat-royal")}

arg_values = {
    "decks": st.none() | st.integers(1, 16), "reason": st.none() | st.text(min_size=1, max_size=10),
    "misdeal": st.none() | st.integers(0, 6), "coup": st.none() | st.integers(1, 80), "side": st.sampled_from(["player", "banker"]), "draw": st.booleans(),
    "card": st.sampled_from(["9H", "10H", "TD", "H3", "AS", "KC", "ZZ", "1X", "11H", "0S"]),
    "mode": st.none() | st.sampled_from(["game", "burn"]),
    "alarm": st.sampled_from(["foreign_card", "reader_mismatch", "tamper", "integrity", "stalled", "no_such_alarm"]),
}


@st.composite
def accepted_commands(draw):
    name = draw(st.sampled_from(NAMES))
    fields = COMMANDS[name].args.__struct_fields__
    args = {}
    for f in fields:
        value = draw(arg_values[f])
        if value is not None or draw(st.booleans()):
            args[f] = value
    body = cm.wire.encode({"cmd": name, "args": {k: v for k, v in args.items() if v is not None}})
    parsed = check(body)
    return parsed


@SETTINGS
@given(st.sampled_from(sorted(SHOES)), st.lists(st.tuples(st.integers(0, 400), accepted_commands()), max_size=12))
def test_any_command_at_any_moment_of_a_shoe_is_carried_out_or_refused(ruleset_name, inserts):
    from shoed.rules.ruleset import load_ruleset
    from shoed.table import TableController

    inputs = list(SHOES[ruleset_name])
    for position, parsed in sorted(inserts, key=lambda x: -x[0]):
        if parsed is None:
            continue
        name, args = parsed
        at = min(position, len(inputs))
        stamp = inputs[at - 1] if at else inputs[0]
        inputs.insert(at, {"kind": "command", "cmd": name, "args": args, "client": "lab", "client_key": "k" * 40,
                           "mono_ns": stamp["mono_ns"], "utc_ns": stamp["utc_ns"]})

    def run():
        table = TableController("t1", load_ruleset(ruleset_name), 6 if ruleset_name == "punto-banco" else 6)
        events, replies = [], []
        for item in inputs:
            step = table.feed(dict(item))
            events += step.events
            if item["kind"] == "command":
                assert step.reply is not None and isinstance(step.reply.get("ok"), bool)
                assert step.reply["ok"] or step.reply.get("error")
                replies.append(step.reply)
        return events, replies

    events, replies = run()
    seqs = [e["seq"] for e in events]
    assert seqs == list(range(1, len(seqs) + 1))
    assert run() == (events, replies), "the same inputs give the same events: the journal replays"
    json.dumps(events)  # every event is plain JSON, as the journal needs
