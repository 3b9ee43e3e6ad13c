"""A card the shoe itself reports as a game card while the burn is still due (burn_short), and the cut card
closer to the end than the ruleset's minimum (cut_card_too_late)."""

from __future__ import annotations

import pytest

from shoed.drivers.beetek import TokenStream, token_reading
from shoed.rules.ruleset import load_ruleset
from shoed.table.controller import TableController

T0 = 1_700_000_000_000_000_000


class Table:
    def __init__(self, ruleset: str = "punto-banco", auto_confirm: bool = False) -> None:
        self.c = TableController("t1", load_ruleset(ruleset), load_ruleset(ruleset).decks, auto_confirm=auto_confirm)
        self.n = 0
        self.events: list[dict] = []

    def feed(self, kind: str, **fields) -> dict | None:
        self.n += 1
        step = self.c.feed({"kind": kind, "mono_ns": self.n * 1_000_000, "utc_ns": T0 + self.n * 1_000_000, **fields})
        self.events.extend(step.events)
        return step.reply

    def beetek(self, wire: bytes) -> None:
        stream = TokenStream()
        for offset, token in stream.feed(wire) + stream.flush():
            r = token_reading(token, "beetek:/dev/ttyUSB0", offset, 0, 0).to_json()
            self.feed(r.pop("kind"), **{k: v for k, v in r.items() if k not in ("mono_ns", "utc_ns")})

    def command(self, cmd: str, **args) -> dict:
        return self.feed("command", cmd=cmd, args=args, client="pit", role="pit")

    def of(self, kind: str) -> list[dict]:
        return [e for e in self.events if e["kind"] == kind]


UNDERBURN = (b"[Manual Burn Cards]<Card:H4>[Manual Burn Cards]<Card:C2>[Manual Burn Cards]<Card:C3>"
             b"[Manual Burn Cards]<Card:C5>[Game]<Card:S9>")


def test_a_game_card_while_the_burn_is_due_is_neither_burned_nor_dealt():
    t = Table(auto_confirm=True)
    t.beetek(UNDERBURN)
    assert [e["card"] for e in t.of("shoe.burn")] == ["4H", "2C", "3C", "5C"]
    assert t.of("coup.opened") == []
    (misdeal,) = t.of("misdeal")
    assert misdeal["misdeal"]["kind"] == "burn_short" and misdeal["misdeal"]["card"] == "9S"
    assert "1 more card" in misdeal["misdeal"]["reason"]
    assert t.c.card_due is False  # held: the gate locks
    assert t.c.waiting()["for"] == "correction"


def test_end_burn_deals_the_card_as_the_coups_first():
    t = Table(auto_confirm=True)
    t.beetek(UNDERBURN)
    assert t.command("end_burn")["ok"]
    assert [e["kind"] for e in t.events[-4:]] == ["misdeal.corrected", "shoe.burn_complete", "coup.opened", "card"]
    card = t.events[-1]
    assert (card["card"], card["recipient"], card["index"], card["held"]) == ("9S", "player", 0, True)
    t.beetek(b"[Game]<Card:DK>[Game]<Card:SQ>[Game]<Card:D2>")
    (result,) = t.of("coup.result")
    assert result["player_cards"] == ["9S", "QS"] and result["winner"] == "player"
    t.feed("shoe_removed", source="beetek:/dev/ttyUSB0")
    assert t.of("shoe.closed")[0]["reconciliation"]["balanced"]


def test_burn_card_burns_it_and_the_burn_goes_on():
    t = Table(auto_confirm=True)
    t.beetek(UNDERBURN)
    assert t.command("burn_card")["ok"]
    burn = t.of("shoe.burn")[-1]
    assert (burn["card"], burn["burn_due"]) == ("9S", 0)
    assert [e["kind"] for e in t.events[-3:]] == ["shoe.burn", "shoe.burn_complete", "coup.opened"]
    t.beetek(b"[Game]<Card:DK>")
    assert t.events[-1]["recipient"] == "player"


def test_cards_after_an_open_burn_short_wait_their_turn():
    """A shoe without a gate: the dealer deals on. Each card is held, corrected in the order they came."""
    t = Table(auto_confirm=True)
    t.beetek(UNDERBURN + b"[Game]<Card:DK>")
    first, second = t.of("misdeal")
    assert second["misdeal"]["kind"] == "burn_short"
    refused = t.command("end_burn", misdeal=second["misdeal"]["id"])
    assert not refused["ok"] and "came first" in refused["error"]
    assert t.command("end_burn")["ok"] and t.command("end_burn")["ok"]
    assert [(e["card"], e["recipient"]) for e in t.of("card") if e["recipient"] != "none"] == \
        [("9S", "player"), ("KD", "banker")]


def test_the_buttons_shoe_after_burn_end():
    t = Table()
    t.feed("shoe_inserted", source="shoe")
    t.feed("button", button="burn_start", source="shoe")
    for c in ["5H", "2C", "3C", "4C", "6C"]:
        t.feed("card", card=c, mode="burn", source="shoe")
    t.feed("button", button="burn_end", source="shoe")
    t.feed("card", card="9S", mode="game", source="shoe")
    assert t.of("misdeal")[0]["misdeal"]["kind"] == "burn_short"
    assert [e["card"] for e in t.of("shoe.burn")] == ["5H", "2C", "3C", "4C", "6C"]


def test_a_skipped_burn_is_flagged_and_end_burn_starts_dealing():
    t = Table(auto_confirm=True)
    t.beetek(b"[Game]<Card:S3>")
    (misdeal,) = t.of("misdeal")
    assert misdeal["misdeal"]["kind"] == "burn_short" and "exposed first card" in misdeal["misdeal"]["reason"]
    assert t.of("shoe.burn") == []
    assert t.command("end_burn")["ok"]
    assert t.of("shoe.burn_complete")[0]["burned"] == 0
    assert (t.events[-1]["card"], t.events[-1]["recipient"]) == ("3S", "player")


def test_burn_card_on_a_skipped_burn_makes_it_the_exposed_card():
    t = Table(auto_confirm=True)
    t.beetek(b"[Game]<Card:S3>")
    assert t.command("burn_card")["ok"]
    burn = t.of("shoe.burn")[0]
    assert (burn["card"], burn["exposed"], burn["burn_due"]) == ("3S", True, 3)


def test_an_unreadable_game_card_while_the_burn_is_due():
    t = Table(auto_confirm=True)
    t.beetek(b"[Manual Burn Cards]<Card:H2>[Manual Burn Cards]<Card:C2>[Game]<Game>")
    misdeal = t.of("misdeal")[-1]["misdeal"]
    assert misdeal["kind"] == "burn_short" and misdeal["card"] is None
    assert [e["card"] for e in t.of("shoe.burn")] == ["2H", "2C"]
    assert t.command("end_burn")["ok"]
    assert t.of("misdeal")[-1]["misdeal"]["kind"] == "unreadable_card"
    assert t.command("enter_card", card="9S")["ok"]
    assert (t.events[-1]["card"], t.events[-1]["recipient"]) == ("9S", "player")


def test_end_burn_needs_the_pit():
    t = Table(auto_confirm=True)
    t.beetek(UNDERBURN)
    reply = t.feed("command", cmd="end_burn", args={}, client="d1", role="dealer")
    assert not reply["ok"] and "pit" in reply["error"]


@pytest.mark.parametrize("fields", [{}, {"mode": None}, {"mode": "game", "source": "camera:rtsp://cam"}])
def test_readers_that_cannot_tell_the_mode_keep_the_burn(fields):
    t = Table()
    t.feed("shoe_inserted", source="shoe")
    source = fields.get("source", "shoe")
    for c in ["4H", "2C", "3C", "5C", "9S"]:
        t.feed("card", card=c, **({"source": source} | fields))
    assert [e["card"] for e in t.of("shoe.burn")] == ["4H", "2C", "3C", "5C", "9S"]
    assert t.of("misdeal") == []


@pytest.mark.parametrize(("ruleset", "cut", "alarms"), [("macau-statutory", 4, 1), ("macau-statutory", 12, 0),
                                                        ("macau-statutory", 14, 0), ("punto-banco", 5, 1)])
def test_the_cut_card_too_close_to_the_end_is_an_alarm(ruleset, cut, alarms):
    t = Table(ruleset)
    rules = t.c.ruleset
    t.feed("shoe_inserted", source="shoe")
    shoe = t.c.shoe
    shoe.phase = "dealing"  # only the count matters here
    shoe.total_seen = shoe.capacity - cut
    t.feed("cut_card", source="shoe")
    t.feed("cut_card", source="shoe")  # the same cut card again: said once
    raised = [e for e in t.of("alarm") if e["alarm"] == "cut_card_too_late"]
    assert len(raised) == alarms
    if alarms:
        assert f"{cut} cards left" in raised[0]["text"] and str(rules.cut_card_min_from_end) in raised[0]["text"]
        assert "cut_card_too_late" not in t.c.alarms  # a notice: nothing is held, play goes on
        assert not t.c.locked


def test_a_card_drawn_while_the_exposed_burn_card_waits_to_be_entered_sets_no_burn_count():
    # The exposed first card unread: the next (face-down) card must not become the exposed one and set the
    # count; it is out of sequence, and the entered card sets the burn.
    t = Table()
    t.feed("shoe_inserted", source="native:shoe")
    t.feed("unreadable", mode="burn", code="not_read", source="native:shoe")
    t.feed("card", card="9C", mode="burn", source="native:shoe")
    assert [m["misdeal"]["kind"] for m in t.of("misdeal")] == ["unreadable_card", "card_out_of_sequence"]
    assert t.c.shoe.burn_first is None and t.of("shoe.burn") == []
    assert t.command("enter_card", card="2H")["ok"]
    assert (str(t.c.shoe.burn_first), t.c.shoe.burn_due) == ("2H", 2)


def test_an_unread_burn_short_burned_after_the_burn_leaves_the_shoe_balanced():
    t = Table(auto_confirm=True)
    t.feed("shoe_inserted", source="native:shoe")
    t.feed("card", card="2H", mode="burn", source="native:shoe")  # two to burn
    t.feed("card", card="3C", mode="burn", source="native:shoe")
    t.feed("unreadable", mode="game", code="not_read", source="native:shoe")  # a game card unread: burn_short
    t.feed("card", card="4C", mode="burn", source="native:shoe")  # the second burn: the burn is over
    assert t.command("burn_card")["ok"]  # the unread one was a burn after all
    assert t.command("close_shoe")["ok"]
    reconciliation = t.of("shoe.closed")[-1]["reconciliation"]
    assert reconciliation["balanced"] is True and reconciliation["unaccounted"] == 0
    assert reconciliation["burned_unread"] == 1 and reconciliation["burned"] == 4


def _power_on(t: Table, mode_told: list[str]) -> None:
    t.feed("power", state="on", clean=True, sources=["shoe"], mode_told=mode_told)


def _underburn(t: Table) -> None:
    t.feed("shoe_inserted", source="shoe")
    for c in ["4H", "2C", "3C", "5C"]:
        t.feed("card", card=c, source="shoe", mode="burn")
    t.feed("card", card="9S", source="shoe", mode="game")


def test_a_driver_that_does_not_tell_the_mode_keeps_the_burn():
    """A package's driver that never sets a reading's mode (it defaults to game) is not taken at its word:
    the power-on names the readers whose drivers declare `tells_mode`, and this one is not among them."""
    t = Table()
    _power_on(t, [])
    _underburn(t)
    assert [e["card"] for e in t.of("shoe.burn")] == ["4H", "2C", "3C", "5C", "9S"]
    assert t.of("misdeal") == []


def test_a_driver_that_tells_the_mode_raises_burn_short_and_a_checkpoint_keeps_it():
    t = Table()
    _power_on(t, ["shoe"])
    checkpoint = t.c.checkpoint()
    assert checkpoint["mode_told"] == ["shoe"]
    again = TableController.from_checkpoint("t1", t.c.ruleset, t.c.decks, checkpoint)
    assert again.mode_told == ("shoe",)
    _underburn(t)
    (misdeal,) = t.of("misdeal")
    assert misdeal["misdeal"]["kind"] == "burn_short"


def test_a_power_on_that_names_no_mode_told_keeps_every_shoe_at_its_word():
    """A journal recorded before the power-on named them replays as it was recorded: every reader but a
    camera or a fallback tells the mode, and its checkpoints carry no `mode_told`."""
    t = Table()
    t.feed("power", state="on", clean=True, sources=["shoe"])
    assert t.c.mode_told is None and "mode_told" not in t.c.checkpoint()
    _underburn(t)
    assert [m["misdeal"]["kind"] for m in t.of("misdeal")] == ["burn_short"]
