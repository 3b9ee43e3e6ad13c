"""Every journal of the corpus replays byte for byte, and recording it again gives the same bytes.

The corpus (tests/corpus/journals/, written by tests/corpus/record.py) holds whole shoes of five
rulesets with every dealing fault corrected by the pit, voids, Royal decisions, failover between a
shoe and a camera, live odds and power cycles. Replay equals record because the controller is pure:
a change that alters one byte of one event fails here, and a change of behaviour made on purpose
records the corpus again (`python -m tests.corpus.record`) and says so in the CHANGELOG.

The journals an earlier behaviour recorded (shoed.table.controller.BEHAVIOUR; `journals-behaviour-N/`: the
same scenarios, recorded under behaviour N) are kept: they must replay byte for byte too, under the
behaviour their checkpoints name, as surveillance replays a journal of an earlier version.
"""

from __future__ import annotations

import pytest

from shoed.journal import iter_records, verify
from shoed.journal.chain import canonical
from shoed.table.replay import Replay
from tests.corpus.record import HERE, JOURNALS, ORDER_KEY, SCENARIOS, record, same_bytes

NAMES = [s.name for s in SCENARIOS]
# The corpus as earlier behaviours recorded it, replayed as it is (behaviour 1, then 2, ...).
EARLIER = [HERE / "journals-behaviour-1", HERE / "journals-behaviour-2", HERE / "journals-behaviour-3"]
# A scenario added after a behaviour was recorded again under it (python -m tests.corpus.record --behaviour N)
# where it has no journal of that day's code: the shuffler's, recorded under behaviours 2 and 3.
EVERY = [(folder / name) for folder in (JOURNALS, *EARLIER) for name in NAMES if (folder / name).is_dir()]
EVERY_IDS = [f"{path.parent.name}/{path.name}" for path in EVERY]


@pytest.mark.parametrize("path", EVERY, ids=EVERY_IDS)
def test_the_journal_is_intact(path):
    report = verify(path)
    assert report.ok, report


@pytest.mark.parametrize("path", EVERY, ids=EVERY_IDS)
def test_replay_gives_every_recorded_event_byte_for_byte(path):
    state = Replay(order_key=ORDER_KEY)  # a shuffler's sealed orders open with the corpus's key
    compared = 0
    for record_ in iter_records(path):
        replayed = state.feed(record_, None)
        if record_.get("kind") == "step":
            assert canonical(replayed) == canonical(record_["events"]), f"jseq {record_['jseq']}"
            compared += len(replayed)
    assert state.differences == []
    assert compared > 250  # whole shoes, not an empty folder


@pytest.mark.parametrize("scenario", SCENARIOS, ids=NAMES)
def test_recording_again_gives_the_same_bytes(scenario, tmp_path):
    (tmp_path / scenario.name).mkdir()
    record(scenario, tmp_path / scenario.name)
    ours = JOURNALS / scenario.name
    assert [n for n in same_bytes(ours, tmp_path / scenario.name) if n != "SCENARIO"] == []


def test_the_corpus_covers_what_it_claims():
    kinds: dict[str, set] = {}
    for name in NAMES:
        seen = kinds.setdefault(name, set())
        for record_ in iter_records(JOURNALS / name):
            for event in record_.get("events", []):
                seen.add(event["kind"])
                if event["kind"] == "misdeal":
                    seen.add("misdeal:" + event["misdeal"]["kind"])
    assert {"misdeal:extra_card", "misdeal:missing_card", "misdeal:unreadable_card", "misdeal:foreign_card",
            "misdeal.corrected", "coup.void"} <= kinds["macau-faults"]
    assert "coup.decision" in kinds["royal-decisions"]
    assert {"device.lost", "device.fallback", "device.connected"} <= kinds["austria-failover"]
    assert {"table.stopped", "table.started", "shoe.odds"} <= kinds["punto-banco"]
    assert {"shuffle.completed", "misdeal:sequence_mismatch", "coup.void"} <= kinds["shuffler"]
    assert {"shuffle.completed", "misdeal:sequence_mismatch", "device.primary"} <= kinds["shuffler-plain-shoe"]
    for name in ("shuffler", "shuffler-plain-shoe"):
        records = list(iter_records(JOURNALS / name))
        events = [e for r in records for e in r.get("events", [])]
        # every shoe opened with its commitment and closed with its reveal; cards taken from the order
        assert all(e.get("commitment") for e in events if e["kind"] == "shoe.opened")
        assert all(e.get("reveal") for e in events if e["kind"] == "shoe.closed")
        assert sum(e.get("source") == "shuffler" for e in events) > (30 if name == "shuffler-plain-shoe" else -1)
        # the order is in no event and no input in plain: only sealed, and revealed at the close
        assert not any(isinstance(r.get("input", {}).get("detail", {}).get("cards"), list) for r in records)


@pytest.mark.parametrize("path", EVERY, ids=EVERY_IDS)
def test_every_event_is_its_schema_struct_byte_for_byte(path):
    """The schema (shoed.table.events) is exact: an event read into its struct and written again is the
    same canonical JSON, so the structs can build the events and `shoed schema` tells the truth."""
    import msgspec

    from shoed.table.events import Event

    encoder = msgspec.json.Encoder(order="sorted")
    kinds = set()
    for record_ in iter_records(path):
        for event in record_.get("events", []):
            struct = msgspec.convert(event, Event)
            assert encoder.encode(struct) == canonical(event), event
            kinds.add(event["kind"])
    assert len(kinds) >= 10


def test_each_corpus_names_its_behaviour():
    from shoed.table.controller import BEHAVIOUR

    for name in NAMES:
        checkpoints = [r for r in iter_records(JOURNALS / name) if r.get("kind") == "checkpoint"]
        assert {c["state"].get("behaviour") for c in checkpoints} == {BEHAVIOUR}
        for behaviour, folder in enumerate(EARLIER, start=1):
            if not (folder / name).is_dir():
                continue
            earlier = [r for r in iter_records(folder / name) if r.get("kind") == "checkpoint"]
            # behaviour 1 names none
            assert {c["state"].get("behaviour") for c in earlier} == {behaviour if behaviour > 1 else None}
        assert len(EARLIER) == BEHAVIOUR - 1
