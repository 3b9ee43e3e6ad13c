"""The controller with a card-reading shuffler: deck verification, a shoe not opened unverified, the order's
integrity, weak shuffles, shuffler faults; the order in no event and not in the snapshot."""

from __future__ import annotations

import json

import pytest

from shoed.table import events as schema
from shoed.drivers.native_session import shuffler_detail
from shoed.rules.shuffle import commitment_salt, reveal_matches, sealed_detail
from shoed.rules.ruleset import load_ruleset
from shoed.simulate import DealSetup, deal
from shoed.simulate.shuffler import ShufflerFaults, shuffle_run
from shoed.table import TableController

T0 = 1_790_000_000_000_000_000
SALT = bytes(range(100, 132))  # the nonce the daemon journals with an input that may open a shoe
RULES = load_ruleset("punto-banco")
KEY = bytes(range(50, 82))  # the order key


def as_the_driver_gives(kind: str, detail: dict, key: bytes) -> dict:
    """A shuffler report's detail as the shuffler driver gives it: a chunk's cards sealed, the digest keyed."""
    return sealed_detail(key, kind, detail)


class Feed:
    def __init__(self, table: TableController | None = None):
        self.table = table or TableController("t1", RULES, 6, order_key=KEY)
        self.n = 0
        self.events: list[dict] = []

    def __call__(self, kind: str, **fields) -> list[dict]:
        self.n += 1
        step = self.table.feed({"kind": kind, "mono_ns": self.n * 1_000_000, "utc_ns": T0 + self.n * 1_000_000,
                                **fields})
        self.events += step.events
        self.reply = step.reply
        return step.events

    def shuffler(self, run, shoe: int, key: bytes | None = KEY) -> None:
        """The shuffler's reports of one shoe, as the shuffler driver gives them under `key` (None: in plain)."""
        for event in run.events:
            if event.shoe == shoe:
                detail = {"boot": 7, **shuffler_detail(event.message)}
                if key is not None:
                    detail = as_the_driver_gives(event.kind, detail, key)
                self(event.kind, source="shuffler:/dev/ttyACM1", shoe_seq=event.n + 1, detail=detail)

    def shoe(self, setup: DealSetup, shoe: int, before=None) -> None:
        """The shoe's deal as its driver reports it; `before(e)` is called before each of the deal's events."""
        for e in deal(setup):
            if e.shoe != shoe:
                continue
            if before is not None:
                before(e)
            if e.kind in ("card", "unreadable"):
                self(e.kind, card=e.card if e.kind == "card" else None, mode=e.mode, source="shoe")
            elif e.kind == "button":
                self("button", button=e.button, source="shoe")
            elif e.kind == "shoe_inserted":
                self(e.kind, source="shoe", salt_nonce=SALT.hex())  # the daemon adds a fresh one
            elif e.kind in ("shoe_removed", "cut_card"):
                self(e.kind, source="shoe")

    def alarms(self, name: str) -> list[dict]:
        return [e for e in self.events if e["kind"] == "alarm" and e["alarm"] == name]


def faults(*names: str, shoe: int = 1) -> ShufflerFaults:
    return ShufflerFaults(frozenset(names), shoe)


def setup_for(run, shoes: int = 1) -> DealSetup:
    return DealSetup(RULES, seed=run.seed, shoes=shoes, orders=run.dealt_orders)


def test_a_verified_shuffle_opens_its_shoe_and_the_order_is_in_no_event():
    run = shuffle_run(21, decks=6, shoes=1)
    feed = Feed()
    feed.shuffler(run, 1)
    kinds = [e["kind"] for e in feed.events]
    assert kinds == ["shuffle.started"] + ["shuffle.deck_checked"] * 6 + ["shuffle.chunk"] * 5 + [
        "shuffle.completed", "shuffle.meters"]
    completed = feed.events[-2]
    assert completed["verified"] and completed["cards"] == 312 and completed["problems"] == []
    assert all(e["complete"] for e in feed.events if e["kind"] == "shuffle.deck_checked")
    feed.shoe(setup_for(run), 1)
    assert any(e["kind"] == "shoe.opened" for e in feed.events)
    assert not feed.alarms("shoe_unverified") and not feed.alarms("weak_shuffle")
    order = run.shoes[0].order
    for event in feed.events:
        if event["kind"].startswith(("shuffle", "shuffler")):
            assert "order" not in event and not isinstance(event.get("cards"), list)
            schema.validate(event)
    snapshot = json.dumps(feed.table.snapshot())
    assert json.dumps(list(order[:8]))[1:-1] not in snapshot and "order" not in snapshot


def test_a_missing_card_names_deck_and_card_and_the_shoe_waits_for_an_authorised_open():
    run = shuffle_run(22, decks=6, shoes=1, faults=faults("missing-card", "foreign-card"))
    (deck, card), = run.shoes[0].missing
    (fdeck, fcard), = run.shoes[0].foreign
    feed = Feed()
    feed.shuffler(run, 1)
    alarms = feed.alarms("deck_incomplete")
    named = {(a["deck"], tuple(a["missing"]), tuple(a["foreign"])) for a in alarms}
    assert (deck, (card,), ()) in named or (deck, (card,), (fcard,)) in named
    assert any(a["deck"] == fdeck and a["foreign"] == [fcard] for a in alarms)
    assert all(f"deck {a['deck']}" in a["text"] for a in alarms) and any(card in a["text"] for a in alarms)
    completed = next(e for e in feed.events if e["kind"] == "shuffle.completed")
    assert not completed["verified"] and any(card in p for p in completed["problems"])
    feed("shoe_inserted", source="shoe")
    (unverified,) = feed.alarms("shoe_unverified")
    assert unverified["active"] and card in unverified["text"]
    assert feed.table.shoe is None and not any(e["kind"] == "shoe.opened" for e in feed.events)
    feed("command", cmd="open_shoe", args={}, client="pit-boss-key")
    assert feed.table.shoe is not None
    cleared = feed.alarms("shoe_unverified")[-1]
    assert not cleared["active"] and cleared["by"] == "pit-boss-key"
    for event in feed.events:
        schema.validate(event)


def test_a_weak_shuffle_is_flagged_when_its_shoe_goes_in():
    run = shuffle_run(23, decks=6, shoes=2, faults=faults("weak-shuffle", shoe=2))
    feed = Feed()
    feed.shuffler(run, 1)
    feed.shuffler(run, 2)
    setup = setup_for(run, shoes=2)
    feed.shoe(setup, 1)
    assert not feed.alarms("weak_shuffle")
    feed.shoe(setup, 2)
    (weak,) = feed.alarms("weak_shuffle")
    assert weak["run"]["length"] >= 5 and weak["active"]
    schema.validate(weak)


def test_a_fair_second_shoe_is_not_flagged():
    run = shuffle_run(24, decks=6, shoes=2)
    feed = Feed()
    feed.shuffler(run, 1)
    feed.shuffler(run, 2)
    setup = setup_for(run, shoes=2)
    feed.shoe(setup, 1)
    feed.shoe(setup, 2)
    assert not feed.alarms("weak_shuffle") and len([e for e in feed.events if e["kind"] == "shoe.opened"]) == 2


def test_a_gap_in_the_order_or_a_wrong_digest_leaves_the_shuffle_unverified():
    run = shuffle_run(25, decks=6, shoes=1)
    feed = Feed()
    chunks = 0
    for event in run.events:
        detail = {"boot": 7, **shuffler_detail(event.message)}
        if event.kind == "order_chunk":
            chunks += 1
            if chunks == 2:
                continue  # lost: the next chunk does not start where the last ended
        feed(event.kind, source="shuffler", detail=as_the_driver_gives(event.kind, detail, KEY))
    (invalid, *_) = feed.alarms("shuffle_order_invalid")
    assert "position 128 while 64 was due" in invalid["text"]
    assert not next(e for e in feed.events if e["kind"] == "shuffle.completed")["verified"]

    feed = Feed()
    for event in run.events:
        detail = {"boot": 7, **shuffler_detail(event.message)}
        if event.kind == "shuffle_completed":
            detail["digest"] = "00" * 32
        feed(event.kind, source="shuffler", detail=as_the_driver_gives(event.kind, detail, KEY))
    assert "digest" in feed.alarms("shuffle_order_invalid")[0]["text"]


def test_an_order_longer_than_the_decks_shuffled_is_invalid_and_not_kept():
    # A shuffler that sends chunks in turn without end: the order is not kept past the decks' cards.
    feed = Feed()
    feed("shuffle_started", source="shuffler", detail={"boot": 7, "shuffle": 9, "decks": 1})
    for position in range(0, 52 * 4, 4):
        feed("order_chunk", source="shuffler", detail=as_the_driver_gives("order_chunk", {
            "boot": 7, "shuffle": 9, "position": position, "cards": ["2S", "3S", "4S", "5S"]}, KEY))
    (invalid,) = feed.alarms("shuffle_order_invalid")
    assert "runs past 104 cards" in invalid["text"]  # one deck, and a deck's worth of foreign cards
    assert len(feed.table.shuffler.current["order"]) == 104


def test_a_jam_is_raised_and_cleared():
    run = shuffle_run(26, decks=6, shoes=1, faults=faults("jam"))
    feed = Feed()
    feed.shuffler(run, 1)
    assert [a["active"] for a in feed.alarms("shuffler_jam")] == [True, False]
    assert "shuffler_jam" not in feed.table.alarms
    assert next(e for e in feed.events if e["kind"] == "shuffle.completed")["verified"]


def test_shuffles_waiting_for_their_shoe_survive_a_checkpoint():
    run = shuffle_run(27, decks=6, shoes=1)
    feed = Feed()
    feed.shuffler(run, 1)
    state = json.loads(json.dumps(feed.table.checkpoint()))
    again = Feed(TableController.from_checkpoint("t1", RULES, 6, state, order_key=KEY))
    again.shoe(setup_for(run), 1)
    assert any(e["kind"] == "shoe.opened" for e in again.events) and not again.alarms("shoe_unverified")


def test_a_table_without_a_shuffler_opens_shoes_as_before():
    feed = Feed()
    feed("shoe_inserted", source="shoe")
    assert feed.table.shoe is not None and feed.table.shuffler is None
    # Left out of the checkpoint: a table without a shuffler journals the same bytes as before.
    assert "shuffler" not in feed.table.checkpoint()


def test_the_shoe_opens_with_a_commitment_and_closes_with_a_reveal_that_matches_it():
    run = shuffle_run(28, decks=6, shoes=1)
    feed = Feed()
    feed.shuffler(run, 1)
    feed.shoe(setup_for(run), 1)
    opened = next(e for e in feed.events if e["kind"] == "shoe.opened")
    closed = next(e for e in feed.events if e["kind"] == "shoe.closed")
    assert opened["shuffle"] == run.shoes[0].shuffle and len(opened["commitment"]) == 64
    reveal = closed["reveal"]
    assert tuple(reveal["order"]) == run.shoes[0].order and reveal["commitment"] == opened["commitment"]
    assert reveal_matches(opened["commitment"], reveal["order"], bytes.fromhex(reveal["salt"]))
    # Nothing before the close names the order: the first card out is never announced ahead.
    before = feed.events[: feed.events.index(closed)]
    assert not any("reveal" in e or "order" in e for e in before)
    assert not feed.alarms("sequence_mismatch")
    for event in feed.events:
        schema.validate(event)


def deal_altered(alter, seed: int = 29):
    """A shoe dealt from the shuffled order with one fault made by `alter(cards)` at the dealt position AT."""
    run = shuffle_run(seed, decks=6, shoes=1)
    feed = Feed()
    feed.shuffler(run, 1)
    cards = list(run.shoes[0].dealt)
    alter(cards)
    setup = DealSetup(RULES, seed=seed, shoes=1, orders=(tuple(cards),))
    dealt = 0
    for e in deal(setup):
        if e.kind == "card":
            dealt += 1
            if dealt > AT + 6:
                break
        if e.kind == "card":
            feed("card", card=e.card, mode=e.mode, source="shoe")
        elif e.kind == "button":
            feed("button", button=e.button, source="shoe")
        elif e.kind == "shoe_inserted":
            feed("shoe_inserted", source="shoe", salt_nonce=SALT.hex())
    return feed, run.shoes[0].dealt


AT = 40  # the fault's card number out of the shoe (from 0), after the burn and well after the cut is found


def test_a_switched_card_is_caught_at_its_position_and_the_coup_held():
    other = {}

    def switch(cards):
        other["was"] = cards[AT]
        cards[AT] = next(c for c in ("AS", "KD", "7C") if c not in (cards[AT], cards[AT + 1]))

    feed, dealt = deal_altered(switch)
    first, resolved, *_ = feed.alarms("sequence_mismatch")
    assert (first["position"], first["expected"]) == (AT, other["was"]) and first["got"] != other["was"]
    assert resolved["mismatch"] == "substituted" and resolved["position"] == AT
    assert any(p["kind"] == "sequence_mismatch" for p in feed.table.pending)  # held: confirm refused until void
    assert not feed.table.card_due


def test_a_removed_card_and_an_inserted_card_are_caught():
    def remove(cards):
        del cards[AT]

    feed, _ = deal_altered(remove)
    assert [a["mismatch"] for a in feed.alarms("sequence_mismatch") if a.get("mismatch")][0] == "removed"
    assert feed.alarms("sequence_mismatch")[0]["position"] == AT

    def insert(cards):
        cards.insert(AT, next(c for c in ("AS", "KD", "7C") if c not in (cards[AT], cards[AT + 1])))

    feed, _ = deal_altered(insert)
    assert [a["mismatch"] for a in feed.alarms("sequence_mismatch") if a.get("mismatch")][0] == "inserted"
    assert feed.alarms("sequence_mismatch")[0]["position"] == AT


def test_sealed_chunks_open_with_the_key_and_checkpoints_keep_the_order_sealed():
    run = shuffle_run(30, decks=6, shoes=1)
    feed = Feed()
    feed.shuffler(run, 1)
    completed = next(e for e in feed.events if e["kind"] == "shuffle.completed")
    assert completed["verified"] and completed["cards"] == 312
    assert [e["count"] for e in feed.events if e["kind"] == "shuffle.chunk"] == [64, 64, 64, 64, 56]
    state = json.loads(json.dumps(feed.table.checkpoint()))
    text = json.dumps(state)
    order = run.shoes[0].order
    assert "sealed_order" in text and json.dumps(list(order[:4]))[1:-1] not in text
    again = Feed(TableController.from_checkpoint("t1", RULES, 6, state, order_key=KEY))
    again.shoe(setup_for(run), 1)
    closed = next(e for e in again.events if e["kind"] == "shoe.closed")
    assert tuple(closed["reveal"]["order"]) == order and not again.alarms("sequence_mismatch")
    # Without the key the waiting shuffle cannot be read: its shoe is not opened without the pit.
    blind = Feed(TableController.from_checkpoint("t1", RULES, 6, state))
    blind("shoe_inserted", source="shoe", salt_nonce=SALT.hex())
    assert blind.table.shoe is None and "no order key" in blind.alarms("shoe_unverified")[0]["text"]


def test_a_sealed_chunk_without_the_key_or_with_another_leaves_the_shuffle_unverified():
    run = shuffle_run(31, decks=6, shoes=1)
    for table in (TableController("t1", RULES, 6), TableController("t1", RULES, 6, order_key=bytes(32))):
        feed = Feed(table)
        feed.shuffler(run, 1, key=KEY)
        (invalid, *_) = feed.alarms("shuffle_order_invalid")
        assert "position 0" in invalid["text"]
        assert not next(e for e in feed.events if e["kind"] == "shuffle.completed")["verified"]


def test_every_commitment_is_checked_against_its_reveal():
    from shoed.table.shuffle import commitment_problems

    run = shuffle_run(32, decks=6, shoes=1)
    feed = Feed()
    feed.shuffler(run, 1)
    feed.shoe(setup_for(run), 1)
    assert commitment_problems([{"kind": "step", "events": feed.events}]) == (1, [])
    forged = json.loads(json.dumps(feed.events))
    closed = next(e for e in forged if e["kind"] == "shoe.closed")
    order = closed["reveal"]["order"]
    order[0], order[1] = order[1], order[0]  # a shoe other than the one committed to
    checked, problems = commitment_problems([{"kind": "step", "events": forged}])
    assert checked == 1 and len(problems) == 1 and "does not match" in problems[0]


# ----- the audit's findings: nothing in the journal tells the order before the reveal -----------------------


def test_a_chunk_in_plain_text_is_refused_and_nothing_of_it_taken():
    """A shuffler read by a driver that does not seal (`native`): its order is not taken in plain text."""
    run = shuffle_run(33, decks=6, shoes=1)
    feed = Feed()
    feed.shuffler(run, 1, key=None)
    invalid, *_ = feed.alarms("shuffle_order_invalid")
    assert "position 0 that is not sealed" in invalid["text"] and invalid["active"]
    assert not any(e["kind"] == "shuffle.chunk" for e in feed.events)
    completed = next(e for e in feed.events if e["kind"] == "shuffle.completed")
    assert not completed["verified"] and completed["cards"] == 0
    assert feed.table.shuffler.pending[0]["order"] == []
    assert json.dumps(list(run.shoes[0].order[:4]))[1:-1] not in json.dumps(feed.table.checkpoint())
    feed("shoe_inserted", source="shoe", salt_nonce=SALT.hex())
    assert feed.table.shoe is None and feed.alarms("shoe_unverified")


def test_a_checkpoint_without_a_key_keeps_no_order():
    from shoed.table.shuffle import ShufflerState

    order = list(shuffle_run(34, decks=1, shoes=1).shoes[0].order)
    state = ShufflerState(current={"shuffle": 2, "decks": 1, "checks": {}, "order": order[:20], "invalid": None},
                          pending=[{"shuffle": 1, "shoe": 1, "decks": 1, "order": order, "verified": True,
                                    "problems": []}],
                          open={"shuffle": 0, "order": order, "salt_nonce": SALT.hex(), "commitment": "00" * 32})
    text = json.dumps(state.to_json(None))
    assert not any(f'"{card}"' in text for card in order) and '"order"' not in text
    again = ShufflerState.from_json(json.loads(text))
    assert again.pending[0]["order"] == [] and not again.pending[0]["verified"]
    assert again.open["order"] == [] and again.tracker is None
    sealed = json.dumps(state.to_json(KEY))  # with the key: sealed, and opened again
    assert not any(f'"{card}"' in sealed for card in order)
    assert ShufflerState.from_json(json.loads(sealed), KEY).pending[0]["order"] == order


def test_the_shufflers_digest_counts_only_as_the_driver_keys_it():
    run = shuffle_run(35, decks=6, shoes=1)
    feed = Feed()
    for event in run.events:
        detail = as_the_driver_gives(event.kind, {"boot": 7, **shuffler_detail(event.message)}, KEY)
        if event.kind == "shuffle_completed":  # the plain digest, as a driver that keys nothing gives it
            detail["digest"] = event.message.digest
            del detail["digest_hmac"]
        feed(event.kind, source="shuffler", detail=detail)
    completed = next(e for e in feed.events if e["kind"] == "shuffle.completed")
    assert not completed["verified"] and "digest" in completed["problems"][0]


def test_the_commitments_salt_is_in_the_journal_nowhere_before_the_reveal():
    run = shuffle_run(36, decks=6, shoes=1)
    feed = Feed()
    feed.shuffler(run, 1)
    feed("shoe_inserted", source="shoe", salt_nonce=SALT.hex())
    opened = next(e for e in feed.events if e["kind"] == "shoe.opened")
    order = run.shoes[0].order
    # The input holds a nonce: with the commitment it tests no guessed order (the key makes the salt).
    assert not reveal_matches(opened["commitment"], order, SALT)
    salt = commitment_salt(KEY, SALT.hex())
    assert reveal_matches(opened["commitment"], order, salt)
    state = json.loads(json.dumps(feed.table.checkpoint()))
    assert salt.hex() not in json.dumps(state) and "salt" not in state["shuffler"]["open"]
    # A restart mid-shoe (with the key) reveals the same salt at the close.
    again = Feed(TableController.from_checkpoint("t1", RULES, 6, state, order_key=KEY))
    again("shoe_removed", source="shoe")
    reveal = next(e for e in again.events if e["kind"] == "shoe.closed")["reveal"]
    assert reveal["salt"] == salt.hex() and reveal_matches(reveal["commitment"], reveal["order"], salt)
    assert not any(salt.hex() in json.dumps(e) for e in feed.events)


def test_a_forged_chunk_is_held_with_the_keyed_evidence_the_driver_gives():
    feed = Feed()
    feed("forged_frame", source="shuffler:/dev/ttyACM1",
         detail={"seq": 3, "boot": 7, "taken": "hmac:" + "ab" * 32, "raw_hmac": "cd" * 32})
    (held,) = feed.alarms("forged_frame")
    assert "the one taken was hmac:" + "ab" * 32 in held["text"] and "the repeat hmac:" + "cd" * 32 in held["text"]


def test_a_shuffle_left_unfinished_by_a_new_one_is_said_abandoned_and_its_order_never_used():
    # A jam and a restart, a half-shuffled batch taken out: the shuffle in progress ends with a warning
    # that names it and what of its order came; the next one goes on as usual.
    run = shuffle_run(28, decks=6, shoes=1)
    feed = Feed()
    feed("shuffle_started", source="shuffler", detail={"boot": 7, "shuffle": 1, "decks": 6})
    feed("order_chunk", source="shuffler", detail=as_the_driver_gives("order_chunk", {
        "boot": 7, "shuffle": 1, "position": 0, "cards": ["2S", "3S", "4S"]}, KEY))
    feed.shuffler(run, 1)
    (warning,) = [e for e in feed.events if e["kind"] == "device.warning" and e["code"] == "shuffle_abandoned"]
    assert warning["text"].startswith("shuffle 1 abandoned by shuffle ") and "3 cards of its order" in warning["text"]
    kinds = [e["kind"] for e in feed.events]
    assert kinds.index("device.warning") == kinds.index("shuffle.started", 1) - 1  # said before the next starts
    assert [s["shuffle"] for s in feed.table.shuffler.pending] == [e["shuffle"] for e in feed.events
                                                                   if e["kind"] == "shuffle.completed"]
    assert not feed.alarms("shuffle_order_invalid")


def test_a_checkpoint_read_back_with_the_key_is_written_again_as_it_was():
    """Three shuffles waiting for their shoes: read back from a checkpoint, the table writes the same checkpoint
    again (a replay compares the checkpoint at each file's head with the state it replayed)."""
    run = shuffle_run(27, decks=6, shoes=3)
    feed = Feed()
    for shoe in (1, 2, 3):
        feed.shuffler(run, shoe)
    state = json.loads(json.dumps(feed.table.checkpoint()))
    assert len(state["shuffler"]["pending"]) == 3
    again = TableController.from_checkpoint("t1", RULES, 6, state, order_key=KEY)
    assert json.loads(json.dumps(again.checkpoint())) == state


def test_cards_in_another_notation_are_checked_as_the_table_takes_them():
    """A driver that writes its cards suit first in lower case ("h3"), as the table accepts them: each card is
    checked against the order as the card the table took, and the whole shoe is in order."""

    class SuitFirst(Feed):
        def __call__(self, kind: str, **fields) -> list[dict]:
            if kind == "card" and fields.get("card"):
                fields["card"] = (fields["card"][1] + fields["card"][0]).lower()
            return super().__call__(kind, **fields)

    run = shuffle_run(27, decks=6, shoes=1)
    feed = SuitFirst()
    feed.shuffler(run, 1)
    feed.shoe(setup_for(run), 1)
    assert sum(e["kind"] == "coup.result" for e in feed.events) > 50
    assert feed.table.shuffler is not None and feed.alarms("sequence_mismatch") == []


def test_a_refused_shoe_is_not_opened_by_a_card_at_a_table_with_auto_confirm():
    """A shoe without buttons (auto_confirm): its first card opens the shoe, but not a shoe refused when it went
    in (shoe_unverified): the card is out of sequence and the pit's open_shoe opens it. Removed, the refused
    shoe takes its shuffle with it: the next shoe takes the next shuffle."""
    run = shuffle_run(22, decks=6, shoes=2, faults=faults("missing-card"))
    feed = Feed(TableController("t1", RULES, 6, order_key=KEY, auto_confirm=True))
    feed.shuffler(run, 1)
    feed.shuffler(run, 2)
    feed("shoe_inserted", source="shoe", salt_nonce=SALT.hex())
    assert feed.alarms("shoe_unverified")[-1]["active"]
    feed("card", card="9S", mode="burn", source="shoe")
    assert feed.table.shoe is None and not any(e["kind"] == "shoe.opened" for e in feed.events)
    assert feed.events[-1]["misdeal"]["kind"] == "card_out_of_sequence"
    assert "shoe_unverified" in feed.events[-1]["misdeal"]["reason"]
    feed("shoe_removed", source="shoe")
    feed("command", cmd="open_shoe", args={}, client="pit-boss-key", salt_nonce=SALT.hex())
    (opened,) = [e for e in feed.events if e["kind"] == "shoe.opened"]
    completed = [e["shuffle"] for e in feed.events if e["kind"] == "shuffle.completed"]
    assert len(completed) == 2 and opened["shuffle"] == completed[1] and opened["commitment"]


def test_a_card_returned_to_the_shoe_comes_out_again_in_its_place():
    """An extra card drawn after the first coup is complete, returned by the pit (return_card): read again as the
    next card, it is in its place in the order (no sequence_mismatch), and the shoe deals as without it."""
    run = shuffle_run(27, decks=6, shoes=1)
    setup = setup_for(run)
    plain = Feed()
    plain.shuffler(run, 1)
    plain.shoe(setup, 1)
    feed = Feed()
    feed.shuffler(run, 1)
    cards = [e.card for e in deal(setup) if e.shoe == 1 and e.kind in ("card", "unreadable")]
    out = {"cards": 0, "returned": False}

    def draw_an_extra_card_at_the_first_confirm(e) -> None:
        if e.kind == "button" and not out["returned"] and any(x["kind"] == "coup.result" for x in feed.events):
            out["returned"] = True
            drawn = cards[out["cards"]]  # the next card out, drawn before the confirm
            feed("card", card=drawn, mode="game", source="shoe")
            assert feed.events[-1]["misdeal"]["kind"] == "extra_card"
            feed("command", cmd="return_card", args={}, client="pit-boss-key")
            assert feed.reply is None or feed.reply.get("ok") is not False
        elif e.kind in ("card", "unreadable"):
            out["cards"] += 1

    feed.shoe(setup, 1, before=draw_an_extra_card_at_the_first_confirm)
    assert out["returned"] and feed.alarms("sequence_mismatch") == []
    results = [(e["player_cards"], e["banker_cards"]) for e in feed.events if e["kind"] == "coup.result"]
    assert results == [(e["player_cards"], e["banker_cards"]) for e in plain.events if e["kind"] == "coup.result"]


SHOE, CAMERA = "native:/dev/shoe", "camera:0"


def _failover_table(seed: int):
    """A reading shoe with a camera over its exit (failover), at a table with a shuffler: the cards as they
    come out of the shoe, and a feed with the shoe in and its shuffle ready."""
    run = shuffle_run(seed, decks=6, shoes=1)
    cards = iter([e.card for e in deal(setup_for(run)) if e.kind == "card"])
    feed = Feed()
    feed("power", state="on", clean=True, sources=[SHOE, CAMERA])
    feed.shuffler(run, 1)
    feed("shoe_inserted", source=SHOE, salt_nonce=SALT.hex())
    return feed, cards



def test_the_cards_a_shoe_repeats_after_its_link_came_back_are_checked_once():
    feed, cards = _failover_table(41)
    seq = iter(range(1, 1000))

    def shoe_card(card: str, mode: str) -> dict:
        return {"card": card, "mode": mode, "source": SHOE, "shoe_seq": next(seq), "detail": {"boot": 7}}

    while feed.table.shoe.phase != "dealing" or feed.table.coup is None or len(feed.table.coup.order) < 2:
        card = next(cards)
        feed("card", **shoe_card(card, "burn" if feed.table.shoe.phase != "dealing" else "game"))
        feed("card", card=card, mode="game", source=CAMERA)
    feed("link", link="lost", source=SHOE)
    kept = []
    for _ in range(2):  # dealt by the camera; the shoe keeps them until they are acknowledged
        card = next(cards)
        kept.append(shoe_card(card, "game"))
        feed("card", card=card, mode="game", source=CAMERA)
    feed("link", link="restored", source=SHOE)
    for item in kept:
        feed("card", **item)
    assert sum(e["kind"] == "card.duplicate" for e in feed.events) == 2
    assert feed.alarms("sequence_mismatch") == [] and feed.table.pending == []


def test_a_card_the_camera_saw_first_and_deals_at_the_handover_is_checked():
    feed, cards = _failover_table(43)
    while feed.table.shoe.phase != "dealing" or feed.table.coup is None or len(feed.table.coup.order) < 2:
        card = next(cards)
        feed("card", card=card, mode="game", source=CAMERA)  # the camera a moment before the shoe
        feed("card", card=card, mode="burn" if feed.table.shoe.phase != "dealing" else "game", source=SHOE)
    seen = next(cards)
    feed("card", card=seen, mode="game", source=CAMERA)  # the shoe's report of it is lost with its link
    feed("link", link="lost", source=SHOE)
    after = next(cards)
    feed("card", card=after, mode="game", source=CAMERA)
    dealt = [e["card"] for e in feed.events if e["kind"] == "card" and e["recipient"] in ("player", "banker")]
    assert dealt[-2:] == [seen, after]
    assert feed.alarms("sequence_mismatch") == []
    tracker = feed.table.shuffler.tracker
    assert tracker is not None and tracker.aligned
    assert tracker.dealt_count == sum(e["kind"] in ("shoe.burn", "card") and e.get("card") is not None
                                      and e.get("recipient") != "unreadable" for e in feed.events)


@pytest.mark.parametrize("count", ["many", -3, 2.5, None, [1]])
def test_a_chunk_whose_count_is_no_count_is_refused_without_an_exception(count):
    feed = Feed()
    shuffler = "shuffler:/dev/ttyACM1"
    feed("shuffle_started", source=shuffler, detail={"boot": 7, "shuffle": 5, "decks": 6})
    feed("order_chunk", source=shuffler, detail={"boot": 7, "shuffle": 5, "position": 0, "count": count,
                                                 "sealed": "00" * 20})
    (chunk,) = [e for e in feed.events if e["kind"] == "shuffle.chunk"]
    assert chunk["count"] == 0 and feed.alarms("shuffle_order_invalid")[0]["active"]


def test_a_verified_shoe_that_goes_in_after_a_refused_one_clears_shoe_unverified():
    run = shuffle_run(22, decks=6, shoes=2, faults=faults("missing-card"))
    feed = Feed()
    feed.shuffler(run, 1)
    feed.shuffler(run, 2)
    feed("shoe_inserted", source="shoe", salt_nonce=SALT.hex())
    feed("shoe_removed", source="shoe")
    feed("shoe_inserted", source="shoe", salt_nonce=SALT.hex())
    raised, cleared = feed.alarms("shoe_unverified")
    assert raised["active"] and not cleared["active"] and "verified" in cleared["text"]
    assert "shoe_unverified" not in feed.table.alarms and feed.table.shoe is not None


def test_a_shoe_that_goes_in_refused_closes_the_shoe_that_was_in():
    """The next shoe goes in while a shoe is open, and is refused (shoe_unverified): the shoe that was in is
    out. It is closed, so that no card of the new shoe is taken from the old shoe's order."""
    run = shuffle_run(22, decks=6, shoes=2, faults=faults("missing-card", shoe=2))
    feed = Feed()
    feed.shuffler(run, 1)
    feed.shuffler(run, 2)
    feed("shoe_inserted", source="shoe", salt_nonce=SALT.hex())
    assert feed.table.shoe is not None and feed.table.shoe.phase != "closed"
    feed("shoe_inserted", source="shoe", salt_nonce=SALT.hex())
    (closed,) = [e for e in feed.events if e["kind"] == "shoe.closed"]
    assert "shoe_unverified" in closed["reason"] and feed.alarms("shoe_unverified")[-1]["active"]
    assert feed.table.between_shoes and feed.table.shuffler.tracker is None
