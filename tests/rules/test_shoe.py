"""The shoe: burn procedure, cut card and last coup, counts, foreign cards, reconciliation.

Macau statutory rules (docs/rules/macau-statutory-rules.txt): Art. II (the first card
exposed tells how many cards are burned; the cut card at least twelve cards
from the end), Art. III (when the cut card comes out, the coup in progress is
the last, or one more coup follows).
"""

from dataclasses import replace

import pytest

from shoed.rules.cards import Card, parse_card
from shoed.rules.ruleset import RulesetError, load_ruleset, ruleset_from_dict, with_decks
from shoed.rules.shoe import BURNING, DEALING, FINISHED, Shoe


@pytest.mark.parametrize("first, burned", [("AS", 1), ("5H", 5), ("9C", 9), ("TD", 10), ("KC", 10)])
def test_first_card_sets_the_burn(first, burned):
    shoe = Shoe(load_ruleset("macau-statutory"), 8)
    shoe.burn(parse_card(first))
    assert shoe.phase == BURNING and shoe.burn_due == burned
    for _ in range(burned):
        assert not shoe.burn_complete
        shoe.burn(Card(2, "C"))
    assert shoe.phase == DEALING and shoe.counts.burned == burned + 1


@pytest.mark.parametrize(
    "rule, in_progress, expected_last",
    [("current", True, 30), ("current", False, 31), ("one-more", True, 31), ("one-more", False, 32)],
)
def test_cut_card_sets_the_last_coup(rule, in_progress, expected_last):
    ruleset = replace(load_ruleset("macau-statutory"), last_coup=rule)
    shoe = Shoe(ruleset, 8, phase=DEALING)
    for _ in range(30):
        shoe.open_coup()
    assert shoe.cut_card(coup_in_progress=in_progress) == expected_last
    shoe.coup_finished(30)
    assert (shoe.phase == FINISHED) == (expected_last == 30)
    shoe.coup_finished(expected_last)
    assert shoe.phase == FINISHED and not shoe.may_open_coup


def test_identity_beyond_the_decks_is_excess():
    shoe = Shoe(load_ruleset("punto-banco"), 6)
    ace = parse_card("AS")
    assert [shoe.note(ace)[1] for _ in range(7)] == [False] * 6 + [True]
    assert shoe.excess_cards() == {"AS": 1}


def test_reconciliation_accounts_for_every_card():
    shoe = Shoe(load_ruleset("punto-banco"), 6)
    for text in ["3H", "2C", "4D", "6S"]:
        card = parse_card(text)
        shoe.note(card)
        shoe.burn(card)
    for text in ["TS", "3C", "KS", "3D", "5H"]:
        shoe.note(parse_card(text))
    shoe.coup_counted(5)
    report = shoe.reconcile()
    assert report["seen"] == 9 and report["burned"] == 4 and report["in_coups"] == 5
    assert report["left_in_shoe"] == 312 - 9 and report["balanced"] is True
    assert report["left_by_identity"]["3H"] == 5 and report["left_by_identity"]["AS"] == 6
    assert shoe.remaining_by_rank()[2] == 24 - 3  # threes: 3H, 3C, 3D
    assert sum(shoe.remaining_by_value()) == 312 - 9


def test_every_fate_of_a_card_is_the_shoes_own_count():
    """What the controller tells the shoe (a card discarded, put back, a coup counted or voided, a
    burn card not read) moves a card between the categories; the reconciliation stays balanced."""
    shoe = Shoe(load_ruleset("punto-banco"), 6)
    cards = [parse_card(t) for t in ["5H", "2C", "3D", "4S", "6H", "7C", "9S", "TD", "JH", "QC"]]
    shoe.note(cards[0])
    shoe.burn(cards[0])  # the exposed first card: five to burn
    assert shoe.phase == BURNING and shoe.burn_due == 5
    for _ in range(5):  # face down, not read: counted as burned, none seen
        assert shoe.burn_unread()
    assert shoe.phase == DEALING and shoe.counts.burned == 6 and not shoe.burn_unread()
    for card in cards[1:]:
        shoe.note(card)
    shoe.coup_counted(4)  # a coup of four cards stands...
    shoe.coup_voided(4, counted=True, closed=1)  # ...and is voided, with the extra card of its misdeal
    shoe.coup_counted(2)
    shoe.discard()
    shoe.returned(cards[-1])  # put back into the shoe: read again later
    report = shoe.reconcile()
    assert report["seen"] == shoe.total_seen == 9 and report["burned_unread"] == 5
    assert report["left_in_shoe"] == shoe.cards_left == 312 - 9 - 5  # the unread burns are out of the shoe
    assert (report["in_coups"], report["in_void_coups"], report["burned"], report["discarded"]) == (2, 5, 6, 1)
    assert report["unaccounted"] == 0 and report["balanced"] is True
    assert report["left_by_identity"]["QC"] == 6


def test_a_burn_card_not_read_is_out_of_the_shoe():
    """A face-down burn card the reader could not identify left the shoe: it is burned, and the
    categories still sum to the shoe's capacity; a shoe read whole names no unread burn."""
    shoe = Shoe(load_ruleset("punto-banco"), 8)
    for text in ["2H", "5S"]:
        shoe.note(parse_card(text))
    shoe.burn(parse_card("2H"))  # exposed: two to burn
    assert shoe.burn_unread()
    shoe.burn(parse_card("5S"))
    assert shoe.phase == DEALING
    for text in ["4C", "3D", "2S", "2C", "TC"]:
        shoe.note(parse_card(text))
    shoe.coup_counted(5)
    report = shoe.reconcile()
    assert (report["seen"], report["burned"], report["burned_unread"], report["in_coups"]) == (7, 3, 1, 5)
    assert report["accounted"] == 8 and report["unaccounted"] == 0 and report["balanced"] is True
    assert report["left_in_shoe"] == shoe.cards_left == 416 - 8
    assert sum(report["categories"].values()) == report["capacity"] == 416
    shoe.unread_identified(parse_card("9D"))  # a shuffler's order tells it later: seen, no longer unread
    report = shoe.reconcile()
    assert (report["seen"], report["burned"], report["balanced"]) == (8, 3, True) and "burned_unread" not in report
    assert report["left_in_shoe"] == 416 - 8
    read_whole = Shoe(load_ruleset("punto-banco"), 8)
    read_whole.note(parse_card("2H"))
    read_whole.burn(parse_card("2H"))
    assert "burned_unread" not in read_whole.reconcile()


def test_unaccounted_card_unbalances():
    shoe = Shoe(load_ruleset("punto-banco"), 6)
    shoe.note(parse_card("AS"))
    assert shoe.reconcile()["balanced"] is False


def test_deck_count_within_the_rules():
    assert with_decks(load_ruleset("macau-statutory"), 12).decks == 12
    with pytest.raises(RulesetError, match="6 to 12"):
        with_decks(load_ruleset("macau-statutory"), 4)


@pytest.mark.parametrize(
    "broken, message",
    [
        ({"tableau": {"player": "DDDDDD", "banker": {}}}, "8 letters"),
        ({"bets": {"dragon": {"pays": "1"}}}, "unknown bet"),
        ({"shoe": {"decks": 8, "min_decks": 8, "max_decks": 8, "burn": "sometimes"}}, "burn"),
    ],
)
def test_broken_ruleset_data_is_a_clear_error(broken, message):
    import tomllib
    from importlib import resources

    data = tomllib.loads((resources.files("shoed.rules") / "rulesets" / "punto-banco.toml").read_text())
    data.update(broken)
    with pytest.raises(RulesetError, match=message):
        ruleset_from_dict(data, "test.toml")


def test_casino_adds_its_own_ruleset_file(tmp_path):
    from importlib import resources

    text = (resources.files("shoed.rules") / "rulesets" / "punto-banco.toml").read_text()
    text = text.replace('name = "punto-banco"', 'name = "house-game"').replace('commission = "0"', 'commission = "1/20"')
    path = tmp_path / "house-game.toml"
    path.write_text(text)
    ruleset = load_ruleset(str(path))
    assert ruleset.name == "house-game" and ruleset.bets["banker"].commission == replace(ruleset.bets["banker"]).commission
    assert str(ruleset.bets["banker"].commission) == "1/20"
