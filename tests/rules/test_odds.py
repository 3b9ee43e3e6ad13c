"""The exact odds engine against the published figures, and against itself.

Figures: docs/standards/baccarat-odds.md (Main bets; Cards per coup; the
counting convention: every coup an ordered sequence of six cards, coups that end
after four or five cards padded with every possible fifth and sixth card).
Tableau: the standard one, as the seed documents word it (see test_tableau.py).
Pairs: Macau statutory rules Art. XIII ("such as the two J ... but J and Q is
not one pair"), docs/rules/macau-statutory-rules.txt.
"""

from __future__ import annotations

import json
from dataclasses import replace
from fractions import Fraction

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from shoed.cli import main
from shoed.rules import odds
from shoed.rules.cards import Card, parse_card
from shoed.rules.coup import BANKER, PLAYER, TIE, Coup, hand_total, settle
from shoed.rules.ruleset import builtin_names, load_ruleset
from tests.conftest import run_shoed

STANDARD = load_ruleset("macau-statutory")  # standard tableau, 5% commission, pairs 11:1
SUPER_SIX = load_ruleset("macau-casinos-austria")  # Banker 1:1, win on 6 pays 1:2, no commission
PUNTO_BANCO = load_ruleset("punto-banco")  # Banco 1:1, no commission, as its document is written
FIXED = [name for name in builtin_names() if load_ruleset(name).fixed_tableau]


def falling(n: int, k: int) -> int:
    out = 1
    for i in range(k):
        out *= n - i
    return out


def percent(value: Fraction, places: int) -> str:
    return f"{float(value * 100):.{places}f}"


# ---------------------------------------------------------------------------
# baccarat-odds.md, "Main bets": total, Banker, Player, Tie, Banker wins with 6.
MAIN_BETS = [
    # decks, total, banker, player, tie, banker six
    (8, 4_998_398_275_503_360, 2_292_252_566_437_888, 2_230_518_282_592_256, 475_627_426_473_216, 269_232_304_455_680),
    (6, 878_869_206_895_680, 403_095_751_234_560, 392_220_492_728_832, 83_552_962_932_288, 47_322_230_031_360),
    (1, 14_658_134_400, 6_737_232_640, 6_548_674_432, 1_372_227_328, 783_208_320),
]


@pytest.mark.parametrize(("decks", "total", "banker", "player", "tie", "banker_six"), MAIN_BETS)
def test_published_main_bet_combinations(decks, total, banker, player, tie, banker_six):
    counts = odds.exact_counts(STANDARD, odds.full_shoe(decks))
    assert counts.total == total == falling(52 * decks, 6)
    assert (counts.banker, counts.player, counts.tie, counts.banker_six) == (banker, player, tie, banker_six)
    assert counts.enough_cards


@pytest.mark.parametrize(("decks", "total", "banker", "player", "tie", "banker_six"), MAIN_BETS)
def test_reference_loops_reproduce_the_same_integers(decks, total, banker, player, tie, banker_six):
    counts = odds.exact_counts_reference(STANDARD, odds.full_shoe(decks))
    assert (counts.total, counts.banker, counts.player, counts.tie, counts.banker_six) == (
        total, banker, player, tie, banker_six,
    )


def test_published_cards_per_coup_and_naturals_8_decks():
    # baccarat-odds.md, "Cards per coup (8 decks)" and "At least one natural (8 decks)".
    counts = odds.exact_counts(STANDARD, odds.full_shoe(8))
    assert counts.by_cards == {4: 1_893_735_611_458_560, 5: 1_516_734_808_780_800, 6: 1_587_927_855_264_000}
    assert counts.natural == 1_714_696_016_515_584
    shares = {k: f"{v / counts.total:.6f}" for k, v in counts.by_cards.items()}
    assert shares == {4: "0.378868", 5: "0.303444", 6: "0.317687"}
    assert f"{counts.natural / counts.total:.6f}" == "0.343049"
    # "A four-card coup is not always a natural: 6/7 against 6/7 also ends after four cards."
    assert counts.by_cards[4] > counts.natural


def test_every_fixed_tableau_ruleset_counts_the_same_coups():
    # The four fixed-tableau seed documents all write the standard tableau.
    grids = {name: odds.exact_counts(load_ruleset(name), odds.full_shoe(8)).grid for name in FIXED}
    assert len(FIXED) == 4 and len(set(grids.values())) == 1


# ---------------------------------------------------------------------------
# baccarat-odds.md, "Main bets": house edges, to the printed precision.
HOUSE_EDGES = [
    # ruleset, bet, decks, printed percentage
    (STANDARD, "banker", 8, "1.05790578"),  # Banker, 5% commission
    (STANDARD, "banker", 6, "1.05584870"),
    (STANDARD, "banker", 1, "1.01174829"),
    (STANDARD, "player", 8, "1.23508133"),  # Player 1:1
    (STANDARD, "player", 6, "1.23741490"),
    (STANDARD, "player", 1, "1.28637249"),
    (STANDARD, "tie", 8, "14.35962878"),  # Tie 8:1
    (STANDARD, "tie", 6, "14.43815980"),
    (STANDARD, "tie", 1, "15.74612693"),
    (SUPER_SIX, "banker", 8, "1.4581"),  # Banker, win on 6 pays 1:2, no commission
    (SUPER_SIX, "banker", 6, "1.4548"),
    (SUPER_SIX, "banker", 1, "1.38521"),
    (STANDARD, "player_pair", 8, "10.3614458"),  # Player Pair / Banker Pair 11:1
    (STANDARD, "player_pair", 6, "11.2540193"),
    (STANDARD, "player_pair", 1, "29.41"),
    (STANDARD, "banker_pair", 8, "10.3614458"),
    (STANDARD, "banker_pair", 6, "11.2540193"),
    (STANDARD, "banker_pair", 1, "29.41"),
    (SUPER_SIX, "player_pair", 8, "10.3614458"),
]


@pytest.mark.parametrize(("ruleset", "bet", "decks", "printed"), HOUSE_EDGES)
def test_published_house_edges(ruleset, bet, decks, printed):
    edge = odds.house_edge(ruleset, odds.exact_counts(ruleset, odds.full_shoe(decks)))[bet]
    assert isinstance(edge, Fraction)
    assert percent(edge, len(printed.split(".")[1])) == printed


def test_house_edge_is_minus_player_expectation_and_exact():
    counts = odds.exact_counts(STANDARD, odds.full_shoe(8))
    edge, expectation = odds.house_edge(STANDARD, counts), odds.player_expectation(STANDARD, counts)
    assert set(edge) == set(STANDARD.bets) == set(expectation)
    assert all(edge[bet] == -expectation[bet] for bet in edge)
    # Tie 8:1 from the counts by hand: 8 * ties - (everything else), over the total.
    assert edge["tie"] == -Fraction(8 * counts.tie - (counts.total - counts.tie), counts.total)
    # Banker, 5% commission: 0.95 * banker wins - player wins; ties push.
    assert edge["banker"] == -(Fraction(95, 100) * counts.banker - counts.player) / counts.total


def test_punto_banco_as_written_favours_the_player_on_banco():
    # docs/rules/punto-banco-casino-schaanwald.txt AUSZAHLUNGEN: "„Banco“ (Banker) zahlt 1:1", no commission.
    counts = odds.exact_counts(PUNTO_BANCO, odds.full_shoe(6))
    edge = odds.house_edge(PUNTO_BANCO, counts)
    assert edge["banker"] < 0
    assert edge["banker"] == -edge["player"] == Fraction(counts.player - counts.banker, counts.total)
    assert percent(edge["banker"], 8) == "-1.23741490"
    assert set(edge) == {"player", "banker", "tie"}  # the document offers no pair bets


def test_settlement_reads_the_result_or_one_pair_flag_never_both():
    # Why marginal counts are enough for every bet's expectation (player_expectation).
    for name in FIXED:
        ruleset = load_ruleset(name)
        for winner in (PLAYER, BANKER, TIE):
            for total in range(10):
                nets = {(pp, bp): settle(ruleset, winner, total, pp, bp) for pp in (True, False) for bp in (True, False)}
                for bet in ruleset.bets:
                    if bet == "player_pair":
                        assert nets[True, True][bet] == nets[True, False][bet] == settle(ruleset, TIE, 0, True, True)[bet]
                    elif bet == "banker_pair":
                        assert nets[True, True][bet] == nets[False, True][bet] == settle(ruleset, TIE, 0, True, True)[bet]
                    else:
                        assert len({n[bet] for n in nets.values()}) == 1


# ---------------------------------------------------------------------------
# Pairs: "the first two cards form a pair ... such as the two J ... but J and Q is
# not one pair" (003 Art. XIII). P(pair) = sum n_r (n_r - 1) / (N (N - 1)).
def test_pair_counts_by_rank_not_by_value():
    by_rank = odds.full_shoe(1)
    counts = odds.exact_counts(STANDARD, by_rank)
    assert counts.player_pair == counts.banker_pair == 13 * 4 * 3 * falling(50, 4)
    assert counts.probability("player_pair") == Fraction(13 * 4 * 3, 52 * 51) == Fraction(1, 17)
    # Ten, jack, queen, king all count 0, yet only same-rank cards pair.
    same_value = (16 * 15 + 9 * 4 * 3) * falling(50, 4)
    assert counts.player_pair < same_value


def test_pairs_do_not_depend_on_the_tableau():
    composition = (3, 0, 5, 1, 0, 2, 7, 1, 0, 4, 2, 0, 6)
    random_tableau = replace(STANDARD, player_rule="SDSDSDSD", banker_rule=("DS" * 5 + "D",) * 8)
    a, b = (odds.exact_counts(r, composition) for r in (STANDARD, random_tableau))
    assert a.player_pair == b.player_pair and a.grid != b.grid


# ---------------------------------------------------------------------------
# Tiny shoes whose every coup the tableau fixes: the rules read off the counts.
TINY_SHOES = [
    # cards, what the tableau does, cards per coup, winner
    ("TS JS QS KS TH JH QH KH", "0 v 0: both draw a 0 and stay on 0 (player 0-5 draws; banker 0-2 always)", 6, TIE),
    ("9S 9H 9D 9C 9S 9H", "9+9 = 8 on both sides: naturals, no card drawn", 4, TIE),
    ("3S 3H 3D 3C 3S 3H", "6 v 6: player stands on 6, banker with no third card stands on 6", 4, TIE),
    ("2S 2H 2D 2C 2S 2H 2D", "4 v 4: player draws to 6; banker 4 draws on a third card of 2 to 6", 6, TIE),
    ("4S 4H 4D 4C 4S 4H", "8 v 8: naturals", 4, TIE),
    ("AS AH AD AC AS AH", "2 v 2: both draw to 3", 6, TIE),
]


@pytest.mark.parametrize(("cards", "reading", "cards_per_coup", "winner"), TINY_SHOES)
def test_tiny_shoes_follow_the_tableau(cards, reading, cards_per_coup, winner):
    dealt = [parse_card(c) for c in cards.split()]
    composition = tuple(sum(1 for c in dealt if c.rank == r) for r in range(1, 14))
    counts = odds.exact_counts(STANDARD, composition)
    n = len(dealt)
    assert counts.total == falling(n, 6), reading
    assert counts.by_cards[cards_per_coup] == counts.total, reading
    assert getattr(counts, winner) == counts.total, reading


def test_fewer_than_six_cards_count_nothing_and_price_nothing():
    composition = (1, 1, 1, 1, 1) + (0,) * 8
    counts = odds.exact_counts(STANDARD, composition)
    assert counts.cards == 5 and counts.total == 0 and not counts.enough_cards
    assert counts.by_cards == {4: 0, 5: 0, 6: 0} and counts.natural == 0
    assert counts == odds.exact_counts_reference(STANDARD, composition)
    with pytest.raises(ValueError, match="not enough cards: 5 left"):
        odds.house_edge(STANDARD, counts)
    with pytest.raises(ValueError, match="not enough cards"):
        counts.probability("banker")
    six = odds.exact_counts(STANDARD, (1, 1, 1, 1, 1, 1) + (0,) * 7)
    assert six.total == 720 and six.enough_cards


# ---------------------------------------------------------------------------
# The fast engine against the plain loops, on random shoes and random tableaux.
rank_compositions = st.lists(st.integers(0, 9), min_size=13, max_size=13).map(tuple)
small_compositions = st.lists(st.integers(0, 2), min_size=13, max_size=13).map(tuple)
tableau_rows = st.text(alphabet="DS", min_size=11, max_size=11)
random_tableaux = st.builds(
    lambda player, banker: replace(STANDARD, player_rule=player, banker_rule=tuple(banker)),
    st.text(alphabet="DS", min_size=8, max_size=8),
    st.lists(tableau_rows, min_size=8, max_size=8),
)


@settings(max_examples=4, deadline=None)
@given(composition=rank_compositions)
def test_engine_agrees_with_reference_on_random_shoes(composition):
    fast, slow = odds.exact_counts(STANDARD, composition), odds.exact_counts_reference(STANDARD, composition)
    assert fast == slow
    assert fast.total == falling(sum(composition), 6)


@settings(max_examples=4, deadline=None)
@given(ruleset=random_tableaux, composition=st.one_of(rank_compositions, small_compositions))
def test_engine_agrees_with_reference_under_any_fixed_tableau(ruleset, composition):
    fast, slow = odds.exact_counts(ruleset, composition), odds.exact_counts_reference(ruleset, composition)
    assert fast == slow
    assert fast.total == falling(sum(composition), 6)


@pytest.mark.parametrize(
    "composition",
    [
        (1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 0, 0, 0),  # ten cards, one of each value
        (0, 0, 0, 0, 0, 0, 0, 3, 3, 0, 0, 0, 0),  # only sevens and eights
        (0, 0, 0, 0, 0, 0, 0, 0, 0, 2, 2, 2, 2),  # only tens and faces
        (7, 0, 1, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0),  # eight cards, one two
        (32, 31, 30, 29, 28, 27, 26, 25, 24, 23, 22, 21, 20),
    ],
)
def test_engine_agrees_with_reference_on_odd_shoes(composition):
    assert odds.exact_counts(STANDARD, composition) == odds.exact_counts_reference(STANDARD, composition)


def test_largest_vectorised_shoe_and_beyond_stay_exact():
    # int64 holds every intermediate up to MAX_VECTOR_CARDS; past it the engine
    # falls back to Python integers.
    assert odds.MAX_VECTOR_CARDS == 1448
    edge = (112,) * 13  # 1456 cards: beyond
    inside = (111,) * 12 + (116,)  # 1448 cards: the last vectorised shoe
    for composition in (inside, edge):
        fast = odds.exact_counts(STANDARD, composition)
        assert fast == odds.exact_counts_reference(STANDARD, composition)
        assert fast.total == falling(sum(composition), 6)


# ---------------------------------------------------------------------------
# Independent of both: deal every card sequence of a small shoe through the coup
# state machine (shoed.rules.coup), weight it, and pad as the convention says.
def enumerate_with_coups(ruleset, composition):
    grid = [[[0] * 10 for _ in range(10)] for _ in range(3)]
    tallies = {"natural": 0, "player_pair": 0, "banker_pair": 0}
    cards = sum(composition)
    left = list(composition)

    def walk(coup, weight, dealt):
        if coup.complete:
            w = weight * falling(cards - dealt, 6 - dealt)
            grid[dealt - 4][hand_total(coup.player)][hand_total(coup.banker)] += w
            result = coup.result()
            tallies["natural"] += w * result.natural
            tallies["player_pair"] += w * result.player_pair
            tallies["banker_pair"] += w * result.banker_pair
            return
        for rank in range(1, 14):
            if left[rank - 1]:
                w = weight * left[rank - 1]
                left[rank - 1] -= 1
                walk(coup.deal(Card(rank, "S"))[0], w, dealt + 1)
                left[rank - 1] += 1

    walk(Coup(ruleset), 1, 0)
    return grid, tallies


@pytest.mark.parametrize(
    ("ruleset", "composition"),
    [
        (STANDARD, (2, 0, 1, 0, 2, 1, 0, 0, 1, 1, 2, 0, 0)),
        (SUPER_SIX, (0, 1, 0, 2, 0, 0, 2, 1, 0, 0, 1, 0, 2)),
        (replace(STANDARD, player_rule="DDDSSDDS", banker_rule=("DSDSDSDSDSD", "SDSDSDSDSDS") * 4),
         (1, 2, 0, 1, 0, 1, 0, 2, 0, 0, 1, 1, 0)),
    ],
)
def test_engine_agrees_with_the_coup_state_machine(ruleset, composition):
    grid, tallies = enumerate_with_coups(ruleset, composition)
    counts = odds.exact_counts(ruleset, composition)
    assert [list(map(list, layer)) for layer in counts.grid] == grid
    assert counts.natural == tallies["natural"]
    assert counts.player_pair == tallies["player_pair"] and counts.banker_pair == tallies["banker_pair"]
    assert counts.total == falling(sum(composition), 6) > 0


def test_baccarat_royal_has_no_fixed_odds():
    # docs/rules/baccarat-royal.txt: "3 – 6 freie Wahl": the active Player chooses.
    royal = load_ruleset("baccarat-royal")
    for engine in (odds.exact_counts, odds.exact_counts_reference):
        with pytest.raises(ValueError, match="fixed tableau"):
            engine(royal, odds.full_shoe(6))


# ---------------------------------------------------------------------------
# Compositions: a fresh shoe, what is left after dealt cards, --remaining text.
def test_full_shoe_and_remaining():
    assert odds.full_shoe(8) == (32,) * 13
    dealt = [parse_card(c) for c in ["AS", "AS", "KH", "TD", "9C"]]
    left = odds.remaining(8, dealt)
    assert left == (30,) + (32,) * 7 + (31, 31, 32, 32, 31)
    assert sum(left) == 416 - 5
    assert odds.value_counts(left) == (32 + 31 + 32 + 32 - 1 + 0, 30, 32, 32, 32, 32, 32, 32, 32, 31)


@pytest.mark.parametrize(
    ("decks", "dealt", "message"),
    [
        (1, ["AS", "AS"], "AS .*dealt 2 times, but a 1-deck shoe holds it 1 times"),
        (8, ["9H"] * 9, "9H .*dealt 9 times"),
    ],
)
def test_remaining_refuses_a_card_dealt_more_often_than_the_shoe_holds(decks, dealt, message):
    with pytest.raises(ValueError, match=message):
        odds.remaining(decks, [parse_card(c) for c in dealt])


@pytest.mark.parametrize("decks", [0, -1, True, 2.0, "8"])
def test_full_shoe_needs_a_positive_whole_number_of_decks(decks):
    with pytest.raises(ValueError, match="positive whole number of decks"):
        odds.full_shoe(decks)


VALUE_SPEC = "0=128,1=32,2=32,3=32,4=32,5=32,6=32,7=32,8=32,9=32"


@pytest.mark.parametrize(
    ("text", "composition"),
    [
        (",".join(["32"] * 13), (32,) * 13),
        (" 1, 2,3,4,5,6,7,8,9,10,11,12,0 ", (1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 0)),
        (VALUE_SPEC, (128,) + (32,) * 9),
        ("9=1,8=2,7=3,6=4,5=5,4=6,3=7,2=8,1=9,0=10", (10, 9, 8, 7, 6, 5, 4, 3, 2, 1)),
    ],
)
def test_parse_remaining_accepts_rank_counts_or_value_classes(text, composition):
    assert odds.parse_remaining(text) == composition


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("", "empty shoe composition"),
        ("32,32,32", "expected 13 rank counts .* got 3"),
        (",".join(["32"] * 12 + ["-1"]), "rank K must be a whole number"),
        (",".join(["32"] * 12 + ["x"]), "rank K must be a whole number"),
        ("0=128,1=32", "missing 2, 3, 4, 5, 6, 7, 8, 9"),
        ("0=128,0=1," + VALUE_SPEC[6:], "value 0 is given twice"),
        ("10=4," + VALUE_SPEC, "value of 0..9"),
        ("A=32," + VALUE_SPEC[6:], "value of 0..9"),
        (VALUE_SPEC.replace("5=32", "5=3.5"), "value 5 must be a whole number"),
        ("1,2,3,4,5,6,7,8,9,10", "expected 13 rank counts"),  # ten bare counts: ambiguous, refused
    ],
)
def test_parse_remaining_refuses_anything_else(text, message):
    with pytest.raises(ValueError, match=message):
        odds.parse_remaining(text)


def test_value_classes_price_the_main_bets_but_not_the_pairs():
    by_value = odds.exact_counts(STANDARD, odds.parse_remaining(VALUE_SPEC))
    by_rank = odds.exact_counts(STANDARD, odds.full_shoe(8))
    assert by_value.grid == by_rank.grid and by_value.natural == by_rank.natural
    assert by_value.player_pair is None and by_value.banker_pair is None
    edge = odds.house_edge(STANDARD, by_value)
    assert set(edge) == {"player", "banker", "tie"}
    assert odds.unpriced_bets(STANDARD, by_value) == ["player_pair", "banker_pair"]
    assert odds.unpriced_bets(STANDARD, by_rank) == []
    assert "player_pair" not in by_value.to_json()
    with pytest.raises(ValueError, match="counts by rank"):
        by_value.probability("player_pair")


@pytest.mark.parametrize("composition", [(1,) * 12, (1,) * 13 + (0,), (-1,) + (4,) * 12, (True,) * 13])
def test_malformed_compositions_are_refused(composition):
    with pytest.raises(ValueError, match="composition has 13 counts|whole numbers, 0 or more"):
        odds.exact_counts(STANDARD, composition)


def test_a_live_shoe_after_some_coups():
    # The use it was made for: recompute after every coup from the cards dealt.
    dealt = [parse_card(c) for c in ["9S", "8H", "9D", "8C", "4S", "4H", "3D", "3C", "KS", "2C"]]
    counts = odds.exact_counts(STANDARD, odds.remaining(8, dealt))
    assert counts.total == falling(406, 6)
    edge = odds.house_edge(STANDARD, counts)
    fresh = odds.house_edge(STANDARD, odds.exact_counts(STANDARD, odds.full_shoe(8)))
    fresh_counts = odds.exact_counts(STANDARD, odds.full_shoe(8))
    # Two nines and two eights gone: fewer naturals, and every edge moves.
    assert Fraction(counts.natural, counts.total) < Fraction(fresh_counts.natural, fresh_counts.total)
    assert all(edge[bet] != fresh[bet] for bet in edge)


# ---------------------------------------------------------------------------
# `shoed odds`: the command-line contract.
def test_cli_json_contract_for_a_full_shoe():
    proc = run_shoed("odds", "--ruleset", "macau-statutory", "--decks", "8", "--json", check=True)
    report = json.loads(proc.stdout)
    combos = report["combinations"]
    assert (combos["total"], combos["banker"], combos["player"], combos["tie"]) == MAIN_BETS[0][1:5]
    assert combos["banker_six"] == MAIN_BETS[0][5] and combos["natural"] == 1_714_696_016_515_584
    assert combos["by_cards"] == {"4": 1_893_735_611_458_560, "5": 1_516_734_808_780_800, "6": 1_587_927_855_264_000}
    assert set(report["house_edge"]) == {"player", "banker", "tie", "player_pair", "banker_pair"}
    assert f"{report['house_edge']['banker'] * 100:.8f}" == "1.05790578"
    assert all(isinstance(v, float) for v in report["house_edge"].values())
    assert report["player_expectation"]["tie"] == -report["house_edge"]["tie"]
    assert report["decks"] == 8 and report["cards"] == 416 and report["ruleset"] == "macau-statutory"


@pytest.mark.parametrize(
    ("args", "decks", "total"),
    [
        (["--ruleset", "punto-banco"], 6, MAIN_BETS[1][1]),  # the ruleset's own deck count
        (["--ruleset", "punto-banco", "--decks", "1"], 1, MAIN_BETS[2][1]),  # outside its range: odds are math
        (["--ruleset", "mini-baccarat-luzern", "--decks", "30"], 30, falling(1560, 6)),
    ],
)
def test_cli_decks(capsys, args, decks, total):
    assert main(["odds", *args, "--json"]) == 0
    report = json.loads(capsys.readouterr().out)
    assert report["decks"] == decks and report["combinations"]["total"] == total


def test_cli_punto_banco_banker_edge_is_negative(capsys):
    assert main(["odds", "--ruleset", "punto-banco", "--json"]) == 0
    edge = json.loads(capsys.readouterr().out)["house_edge"]
    assert edge["banker"] < 0 < edge["player"] and edge["banker"] == -edge["player"]


def test_cli_remaining_by_value_leaves_pairs_unpriced(capsys):
    assert main(["odds", "--ruleset", "macau-statutory", "--remaining", VALUE_SPEC, "--json"]) == 0
    report = json.loads(capsys.readouterr().out)
    assert report["combinations"]["total"] == MAIN_BETS[0][1]
    assert set(report["house_edge"]) == {"player", "banker", "tie"}
    assert set(report["unpriced"]) == {"player_pair", "banker_pair"} and "decks" not in report


def test_cli_readable_table(capsys):
    assert main(["odds", "--ruleset", "macau-casinos-austria"]) == 0
    out = capsys.readouterr().out
    assert "2,292,252,566,437,888" in out and "4,998,398,275,503,360" in out
    assert "1.458104%" in out  # Banker 1:1, 6 pays 1:2


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--ruleset", "baccarat-royal"], "odds need a fixed tableau"),
        (["--ruleset", "no-such-game"], "unknown ruleset 'no-such-game'"),
        (["--ruleset", "punto-banco", "--decks", "0"], "positive whole number of decks"),
        (["--ruleset", "punto-banco", "--remaining", "1,2,3"], "expected 13 rank counts"),
        (["--ruleset", "punto-banco", "--remaining", "1,1,1,1,1,0,0,0,0,0,0,0,0"], "not enough cards: 5 left"),
    ],
)
def test_cli_bad_input_exits_2_with_one_line(capsys, args, message):
    assert main(["odds", *args]) == 2
    captured = capsys.readouterr()
    assert captured.out == ""
    assert captured.err.count("\n") == 1 and message in captured.err


def test_cli_decks_and_remaining_together_are_refused():
    proc = run_shoed("odds", "--ruleset", "punto-banco", "--decks", "8", "--remaining", VALUE_SPEC)
    assert proc.returncode == 2 and "not allowed with" in proc.stderr and proc.stdout == ""
