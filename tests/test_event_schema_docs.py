"""The schema lists every event kind, docs/events.md has one example of each that the
schema accepts, and event times never go backwards in seq order."""

from __future__ import annotations

import json
import re
from pathlib import Path

from shoed.table.events import DEVICE_LINK, EVENT_TYPES, json_schema, validate
from tests.test_daemon_odds import deal_to_first_result, steps, table  # noqa: F401 - `table` is a fixture

DOCS = Path(__file__).resolve().parent.parent / "docs" / "events.md"


def schema_kinds() -> set[str]:
    defs = json_schema()["$defs"]
    kinds = (d.get("properties", {}).get("kind", {}).get("enum") for d in defs.values())
    return {k[0] for k in kinds if k}


def doc_examples() -> list[dict]:
    return [json.loads(block) for block in re.findall(r"```json\n(.*?)\n```", DOCS.read_text(), re.S)]


def test_the_schema_lists_every_kind_the_table_and_the_transport_send():
    kinds = schema_kinds()
    assert {"heartbeat", "shoe.odds", "coup.void", "misdeal.corrected", "table.started"} <= kinds
    # Every kind the controller and its helpers emit: a struct of the schema (`ev.Card`), given to `_emit`
    # or made where it happens (`ev.CoupResult(...)`), or a kind spelled as a literal (shoed/table/shuffle.py),
    # which the controller looks up in the schema.
    core = Path(__file__).resolve().parent.parent / "shoed" / "table"
    source = "".join(path.read_text() for path in sorted(core.glob("*.py")))
    structs = set(re.findall(r"_emit\(step, ev\.(\w+)", source)) | set(re.findall(r"\bev\.([A-Z]\w*)\(", source))
    structs |= {"DevicePrimary", "DeviceFallback"}
    assert {"Card", "CoupResult", "TableClockStep"} <= structs  # the sources were read
    by_name = {cls.__name__: kind for kind, cls in EVENT_TYPES.items()}
    assert structs <= set(by_name), structs - set(by_name)
    emitted = {by_name[name] for name in structs} | set(re.findall(r'_emit\(step, "([a-z._]+)"', source))
    emitted |= {cls.__struct_config__.tag for cls in DEVICE_LINK.values()}
    assert {"shuffle.started", "device.lost"} <= emitted
    assert emitted <= kinds, emitted - kinds


def test_every_kind_has_an_example_in_the_docs_that_the_schema_accepts():
    examples = doc_examples()
    assert {e["kind"] for e in examples} == schema_kinds()
    for example in examples:
        validate(example)
    assert any(e["kind"] == "heartbeat" and "seq" in e for e in examples)


def test_event_times_never_go_backwards_in_seq_order(table, base):  # noqa: F811 - the fixture
    from shoed.simulate.wire import native_message

    daemon, shoe, turn = table
    rest = deal_to_first_result(shoe, turn)
    shoe.offer(native_message(rest[0]))  # the confirm read in the same turn as the coup's last card
    shoe.wait(lambda: steps(base / "journal")[-1]["input"].get("button") == "confirm", 10, "the confirm", pump=turn)
    records = steps(base / "journal")
    assert [r["input"]["kind"] for r in records[-3:]] == ["card", "odds", "button"]
    events = sorted((e for r in records for e in r["events"]), key=lambda e: e["seq"])
    times = [(e["utc"], e["mono_ns"]) for e in events]
    backwards = [(a, b) for a, b in zip(times, times[1:], strict=False) if b[0] < a[0] or b[1] < a[1]]
    assert not backwards
    # The odds are stamped with the time of the coup's last card.
    card, odds = records[-3], records[-2]
    assert (odds["input"]["utc_ns"], odds["input"]["mono_ns"]) == (card["input"]["utc_ns"], card["input"]["mono_ns"])
