"""A plain shoe that reads no card: each card is signalled as a draw (the shoe's `draw` or the dealer's `draw`
command) and takes its identity from the shuffled order once the cut is found (`source: shuffler`); the cards
the dealer enters find the cut; a camera, when there is one, checks each drawn card and a disagreement is
`alarm sequence_mismatch` at the exact card with the coup held; a card is never guessed (docs/shuffler.md)."""

from __future__ import annotations

import pytest

from shoed.rules.shuffle import Tracker, commitment_salt, reveal_matches
from shoed.simulate import DealSetup, deal
from shoed.simulate.shuffler import shuffle_run
from shoed.table import events as schema
from tests.test_table_shuffler import KEY, RULES, SALT, Feed

PLAIN = "plain:/dev/ttyACM0"
CAMERA = "camera:0"


def deal_by_draws(seed: int = 31, *, camera: str | None = None, seen=None, upto: int | None = None,
                  inserted: bool = True, enters=None, late: bool = False):
    """A shuffled shoe dealt from a plain shoe: each card a `draw`; a card the table could not identify is
    entered by the dealer (`late`: only once the next card is drawn, or before the next button); `camera`
    "before" or "after": a camera sees each card (as `seen(position, card)` says) before or after its draw
    (the first card after it: the table knows its shoe signals draws from the first draw on); the dealer
    enters `enters(n, card)` for the nth card entered. Returns the feed, the cards as they came out, and how
    many were entered."""
    run = shuffle_run(seed, decks=6, shoes=1)
    feed = Feed()
    feed.shuffler(run, 1)
    if not inserted:
        feed("command", cmd="open_shoe", args={}, client="dealer", salt_nonce=SALT.hex())
    out: list[str] = []
    waiting: list[tuple[int, str]] = []  # cards not identified, on the layout, to be entered: (misdeal, card)
    entered = 0

    def enter(keep: int = 0) -> None:
        nonlocal entered
        while len(waiting) > keep:
            misdeal, card = waiting.pop(0)
            card = enters(entered, card) if enters else card
            entered += 1  # the dealer enters the card on the layout (naming it, where two wait)
            feed("command", cmd="enter_card", args={"card": card, **({"misdeal": misdeal} if late else {})},
                 client="dealer")

    for e in deal(DealSetup(RULES, seed=seed, shoes=1, orders=run.dealt_orders)):
        if e.kind != "card":
            enter()
        if e.kind == "card":
            position = len(out)
            out.append(e.card)
            if upto is not None and position >= upto:
                break
            read = seen(position, e.card) if seen else e.card
            before = feed.table.misdeal_ids
            if camera == "before" and position:
                feed("card", card=read, mode=e.mode, source=CAMERA)
            feed("draw", mode=e.mode, source=PLAIN)
            if camera == "after" or (camera and not position):
                feed("card", card=read, mode=e.mode, source=CAMERA)
            waiting += [(p["id"], e.card) for p in feed.table.pending
                        if p["kind"] == "unreadable_card" and p["id"] > before]
            enter(keep=1 if late else 0)
        elif e.kind == "button":
            feed("button", button=e.button, source=PLAIN)
        elif e.kind == "shoe_inserted" and inserted:
            feed("shoe_inserted", source=PLAIN, salt_nonce=SALT.hex())
        elif e.kind in ("shoe_removed", "cut_card"):
            feed(e.kind, source=PLAIN)
    return feed, run, out, entered


def dealt(feed) -> list[dict]:
    """One event for each card out of the shoe (a face-down burn card not identified: card None)."""
    return [e for e in feed.events
            if e["kind"] == "shoe.burn" or (e["kind"] == "card" and e["recipient"] != "unreadable")]


def identities(feed) -> list[str | None]:
    return [e["card"] for e in dealt(feed)]


def as_known(out: list[str], feed) -> list[str | None]:
    """The cards out of the shoe, None where the table could not know them (face-down burns before the cut)."""
    return [card if known is not None else None for card, known in zip(out, identities(feed), strict=True)]


def test_a_whole_shoe_from_draws_takes_each_card_from_the_order_once_the_cut_is_found():
    feed, run, out, entered = deal_by_draws()
    cards = dealt(feed)
    # Every card out of the shoe, in order; only the first few entered by hand (the exposed card and
    # enough after it to find the cut) and the face-down burns before them not known; each after that is
    # the order's, with source shuffler.
    known = identities(feed)
    assert known == as_known(out, feed) and len(out) > 250
    unknown = known.index(None) if None in known else 0
    assert 2 <= entered <= 6 and sum(e.get("manual", False) for e in cards) == entered
    drawn = [e for e in cards if e["source"] == "shuffler"]
    assert len(drawn) == len(out) - entered - known.count(None) and all(e["drawn_by"] == PLAIN for e in drawn)
    assert unknown and known[unknown + 10:] == out[unknown + 10:]
    assert not feed.alarms("sequence_mismatch") and not feed.table.pending
    closed = next(e for e in feed.events if e["kind"] == "shoe.closed")
    opened = next(e for e in feed.events if e["kind"] == "shoe.opened")
    assert reveal_matches(opened["commitment"], closed["reveal"]["order"], commitment_salt(KEY, SALT.hex()))
    assert closed["reconciliation"]["balanced"], closed["reconciliation"]
    for event in feed.events:
        schema.validate(event)


def test_the_same_shoe_read_by_a_reading_shoe_gives_the_same_coups():
    feed, run, _, _ = deal_by_draws(seed=32)
    reading = Feed()
    reading.shuffler(run, 1)
    reading.shoe(DealSetup(RULES, seed=32, shoes=1, orders=run.dealt_orders), 1)

    def results(f):
        return [(e["player_cards"], e["banker_cards"], e["winner"]) for e in f.events if e["kind"] == "coup.result"]

    assert results(feed) == results(reading) and len(results(feed)) > 40


def test_a_draw_before_the_cut_is_found_is_never_guessed():
    run = shuffle_run(33, decks=6, shoes=1)
    feed = Feed()
    feed.shuffler(run, 1)
    feed("shoe_inserted", source=PLAIN, salt_nonce=SALT.hex())
    feed("draw", mode="game", source=PLAIN)  # the exposed card: one of six places in the order
    (card,) = [e for e in feed.events if e["kind"] == "card"]
    assert card["card"] is None and card["recipient"] == "unreadable" and card["reason"] == "not_identified"
    assert [p["kind"] for p in feed.table.pending] == ["unreadable_card"] and not feed.table.shuffler.tracker.aligned


def test_without_a_shuffled_order_every_draw_is_a_card_not_read():
    feed = Feed()
    feed("shoe_inserted", source=PLAIN)
    feed("draw", mode="game", source=PLAIN)
    card = next(e for e in feed.events if e["kind"] == "card")
    assert card["card"] is None and card["reason"] == "no_order"


@pytest.mark.parametrize("camera", ["before", "after"])
def test_a_camera_that_agrees_with_every_drawn_card_raises_nothing(camera):
    feed, _, out, entered = deal_by_draws(seed=34, camera=camera)
    assert identities(feed) == as_known(out, feed)
    assert not feed.alarms("sequence_mismatch") and not feed.table.pending
    if camera == "before":
        assert entered == 1  # the camera's reads find the cut; the dealer enters only the exposed card


@pytest.mark.parametrize("camera", ["before", "after"])
def test_a_camera_that_sees_another_card_than_the_order_raises_sequence_mismatch_at_that_card(camera):
    at = 40
    switched = {}

    def seen(position, card):
        if position == at:
            switched["card"] = next(c for c in ("AS", "KD", "7C") if c != card)
            return switched["card"]
        return card

    feed, run, out, _ = deal_by_draws(seed=35, camera=camera, seen=seen, upto=at + 5)
    (found,) = feed.alarms("sequence_mismatch")
    assert (found["position"], found["expected"], found["got"]) == (at, out[at], switched["card"])
    assert found["source"] == CAMERA
    # Held for the pit's void, and no card after it is taken from the order: never guessed.
    assert any(p["kind"] == "sequence_mismatch" for p in feed.table.pending)
    later = [e for e in feed.events if e["kind"] == "card" and e["seq"] > found["seq"]]
    assert later and not any(e["source"] == "shuffler" for e in later)
    # Seen before its draw, the card is not taken from the order at all; drawn before the camera saw it, it was.
    drawn = [e for e in feed.events if e["kind"] == "card" and e.get("source") == "shuffler"]
    assert drawn[-1]["card"] == (out[at - 1] if camera == "before" else out[at])


def test_cards_identified_after_they_came_out_find_the_cut_then_are_checked_against_the_order():
    run = shuffle_run(36, decks=6, shoes=1)
    shoe = run.shoes[0]
    out = shoe.order[shoe.cut:] + shoe.order[: shoe.cut]
    tracker = Tracker(shoe.order)
    for _ in range(20):
        tracker.unknown()  # twenty cards out, none read
    position = 0
    while not tracker.aligned:
        assert tracker.identify(position, out[position]).ok
        position += 2  # every other card seen: the others stay any card
    assert tracker.offset == shoe.cut and position <= 20
    assert tracker.identify(position + 1, out[position + 1]).ok
    wrong = next(c for c in ("AS", "KD", "7C") if c != out[position + 1])
    check = tracker.identify(position + 1, wrong)
    assert check.mismatch is not None
    assert (check.mismatch.position, check.mismatch.expected, check.mismatch.got) == (position + 1, out[position + 1], wrong)
    with pytest.raises(ValueError):
        tracker.identify(20, out[20])  # not out of the shoe yet
    # Two reads of one card that disagree before the cut is found: the check stops rather than guess.
    other = Tracker(shoe.order)
    other.unknown()
    assert other.identify(0, out[0]).ok or other.aligned
    assert not other.identify(0, wrong if wrong != out[0] else "2C").ok and other.lost


def test_the_open_shoe_command_takes_the_oldest_shuffle_when_no_shoe_went_in():
    feed, run, out, entered = deal_by_draws(seed=37, inserted=False)
    opened = next(e for e in feed.events if e["kind"] == "shoe.opened")
    assert opened["shuffle"] == run.shoes[0].shuffle and opened["commitment"]
    assert identities(feed) == as_known(out, feed) and not feed.alarms("shoe_unverified")


def test_the_dealers_draw_command_is_a_draw():
    run = shuffle_run(38, decks=6, shoes=1)
    feed = Feed()
    feed.shuffler(run, 1)
    feed("command", cmd="draw", args={}, client="dealer")
    assert feed.reply == {"ok": False, "error": "no shoe is open"}
    feed("shoe_inserted", source=PLAIN, salt_nonce=SALT.hex())
    feed("command", cmd="draw", args={}, client="dealer")
    assert feed.reply == {"ok": True}
    card = [e for e in feed.events if e["kind"] == "card"][-1]
    assert card["source"] == "command:dealer" and card["recipient"] == "unreadable"  # the exposed card: entered
    assert feed.table.shuffler.draws and feed.table.shuffler.tracker.dealt_count == 1


def test_a_camera_deals_once_the_plain_shoe_is_lost_and_its_cards_are_checked_against_the_order():
    run = shuffle_run(39, decks=6, shoes=1)
    feed = Feed()
    feed("power", state="on", sources=[PLAIN, CAMERA])
    feed.shuffler(run, 1)
    out: list[str] = []
    lost = None
    for e in deal(DealSetup(RULES, seed=39, shoes=1, orders=run.dealt_orders)):
        if e.kind == "card":
            out.append(e.card)
            if lost is None and len(out) == 60:
                lost = feed("link", link="lost", source=PLAIN)
            if lost is None:
                feed("draw", mode=e.mode, source=PLAIN)
                feed("card", card=e.card, mode=e.mode, source=CAMERA)
                if any(p["kind"] == "unreadable_card" for p in feed.table.pending):
                    feed("command", cmd="enter_card", args={"card": e.card}, client="dealer")
            else:
                feed("card", card=e.card if len(out) != 80 else "AS" if e.card != "AS" else "KD", mode=e.mode,
                     source=CAMERA)
            if len(out) == 85:
                break
        elif e.kind == "button" and lost is None:
            feed("button", button=e.button, source=PLAIN)
        elif e.kind == "shoe_inserted":
            feed("shoe_inserted", source=PLAIN, salt_nonce=SALT.hex())
    assert any(e["kind"] == "device.fallback" and e["source"] == CAMERA for e in lost)
    camera_cards = [e for e in feed.events if e["kind"] == "card" and e["source"] == CAMERA]
    assert camera_cards and camera_cards[0]["card"] == out[59]  # the camera deals from the card after the last draw
    (found, *_) = feed.alarms("sequence_mismatch")
    assert (found["position"], found["expected"], found["source"]) == (79, out[79], CAMERA)


@pytest.mark.parametrize("wrong", [0, 1, 2])
def test_one_card_entered_wrong_is_caught_and_no_identity_is_taken_from_the_order(wrong):
    """The exposed card, a coup card before the cut is found, or the card that would confirm it: entered
    wrong, the table finds the entries disagree with the order (`alarm sequence_mismatch`) and from then on
    every card is entered by hand; the order never deals a card the entries alone would have put there."""
    def enters(n, card):
        return next(c for c in ("AS", "KD", "7C") if c != card) if n == wrong else card

    feed, _, out, entered = deal_by_draws(seed=40, enters=enters, upto=120)
    (found,) = feed.alarms("sequence_mismatch")
    assert found["position"] >= wrong and entered > 100
    assert not [e for e in dealt(feed) if e["source"] == "shuffler"]
    # Without the wrong entry, three cards entered find and confirm the cut.
    assert deal_by_draws(seed=40, upto=120)[3] == 3


def test_a_draw_command_at_a_table_without_a_shuffler_is_refused_and_opens_no_misdeal():
    feed = Feed()
    feed("shoe_inserted", source="native:/dev/shoe")
    for _ in range(50):  # a key that sends draws at its rate: nothing piles up
        assert feed("command", cmd="draw", args={}, client="dealer", role="dealer") == []
        assert feed.reply == {"ok": False, "error": "draw is for a shoe that reads no card, at a table with a "
                              "card-reading shuffler; this table has none; nothing was done"}
    assert feed.table.pending == [] and feed.table.card_due


def test_a_draw_command_at_a_shoe_that_reads_its_cards_is_refused():
    run = shuffle_run(42, decks=6, shoes=1)
    feed = Feed()
    feed.shuffler(run, 1)
    feed("shoe_inserted", source="native:/dev/shoe", salt_nonce=SALT.hex())
    for e in deal(DealSetup(RULES, seed=42, shoes=1, orders=run.dealt_orders)):
        if e.kind == "card":
            feed("card", card=e.card, mode=e.mode, source="native:/dev/shoe")
            break
    feed("command", cmd="draw", args={}, client="dealer", role="dealer")
    assert feed.reply == {"ok": False, "error": "this shoe reads its cards (1 came read, none as a draw); draw is "
                          "for a shoe that reads none; nothing was done"}
    assert not feed.table.shuffler.draws and feed.table.pending == []


def test_draws_before_the_first_is_answered_are_refused_so_misdeals_never_pile_up():
    run = shuffle_run(43, decks=6, shoes=1)
    feed = Feed()
    feed.shuffler(run, 1)
    feed("shoe_inserted", source=PLAIN, salt_nonce=SALT.hex())
    feed("command", cmd="draw", args={}, client="dealer", role="dealer")
    assert feed.reply == {"ok": True}
    (misdeal,) = feed.table.pending
    for _ in range(50):
        assert feed("command", cmd="draw", args={}, client="dealer", role="dealer") == []
        assert feed.reply == {"ok": False, "error": f"misdeal {misdeal['id']} (unreadable_card) is open: correct it "
                              "before the next draw; nothing was done"}
    assert feed.table.pending == [misdeal] and feed.table.shuffler.tracker.dealt_count == 1
    (exposed, *_) = run.dealt_orders[0]
    feed("command", cmd="enter_card", args={"card": exposed}, client="dealer", role="dealer")
    assert feed.reply == {"ok": True} and feed.table.pending == []
    feed("command", cmd="draw", args={"mode": "burn"}, client="dealer", role="dealer")  # the next card is drawn
    assert feed.reply == {"ok": True} and feed.table.shuffler.tracker.dealt_count == 2


def test_a_dealer_who_enters_each_card_one_draw_late_never_puts_a_card_in_the_wrong_hand():
    """The dealer enters a card not identified only after drawing the next: a card drawn while one before it
    waits to be entered is not dealt from the order ahead of it (it waits its turn, entered too), so every coup
    is the one a dealer entering at once gets."""
    at_once, *_ = deal_by_draws(seed=33)
    feed, *_ = deal_by_draws(seed=33, late=True)
    results = [(r["player_cards"], r["banker_cards"]) for r in feed.events if r["kind"] == "coup.result"]
    assert results == [(r["player_cards"], r["banker_cards"]) for r in at_once.events if r["kind"] == "coup.result"]
    assert len(results) > 50 and feed.alarms("sequence_mismatch") == []


def test_a_camera_taking_over_from_a_plain_shoe_checks_the_draw_it_had_not_seen_and_deals_the_next():
    """The plain shoe's link is lost right after a draw the camera (seeing each card a moment after its draw) has
    not reported yet: the camera, now dealing, checks that card against the draw (dealt once) and deals the next."""
    seed = 35
    run = shuffle_run(seed, decks=6, shoes=1)
    cards = iter([e.card for e in deal(DealSetup(RULES, seed=seed, shoes=1, orders=run.dealt_orders))
                  if e.kind == "card"])
    feed = Feed()
    feed("power", state="on", clean=True, sources=[PLAIN, CAMERA])
    feed.shuffler(run, 1)
    feed("shoe_inserted", source=PLAIN, salt_nonce=SALT.hex())

    def draw(mode: str, camera: bool = True) -> str:
        card = next(cards)
        feed("draw", mode=mode, source=PLAIN)
        if camera:
            feed("card", card=card, mode="game", source=CAMERA)
        if any(p["kind"] == "unreadable_card" for p in feed.table.pending):
            feed("command", cmd="enter_card", args={"card": card}, client="dealer")
        return card

    while feed.table.shoe.phase != "dealing":
        draw("burn")
    while not feed.table.shuffler.plain.confirmed or feed.table.coup_state != "open":
        if feed.table.coup_state != "open":
            feed("button", button="confirm", source=PLAIN)
        else:
            draw("game")
    first = len(feed.events)
    drawn = draw("game", camera=False)
    feed("link", link="lost", source=PLAIN)
    feed("card", card=drawn, mode="game", source=CAMERA)  # the camera's read of the card drawn last
    after = next(cards)
    feed("card", card=after, mode="game", source=CAMERA)  # the next card out, the camera dealing
    assert [e["card"] for e in feed.events[first:] if e["kind"] == "card"] == [drawn, after]
    assert feed.alarms("sequence_mismatch") == []
