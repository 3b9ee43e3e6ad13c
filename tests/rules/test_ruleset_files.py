"""A ruleset file a casino writes (docs/integrators.md, "A casino adds its own game"): every key of the
wrong type or out of its range is refused with one line that names the file and the key, never a
traceback and never a value taken for another (`correction = "false"` read as true, a commission of 3
settling a Banker win at -2)."""

from __future__ import annotations

import copy
import tomllib
from fractions import Fraction
from importlib import resources

import pytest

from shoed.rules.ruleset import RulesetError, ruleset_from_dict


def _data(name: str = "punto-banco") -> dict:
    return tomllib.loads((resources.files("shoed.rules") / "rulesets" / f"{name}.toml").read_text())


def _set(data: dict, dotted: str, value) -> dict:
    data = copy.deepcopy(data)
    *path, last = dotted.split(".")
    where = data
    for key in path:
        where = where.setdefault(key, {})
    if value is _DROP:
        del where[last]
    else:
        where[last] = value
    return data


_DROP = object()

BROKEN = [
    ("name", 7, "name: a string"),
    ("name", " ", "name: a ruleset has a name"),
    ("title", 5, "title: a string"),
    ("source", ["a"], "source: a string"),
    ("document", 1.5, "document: a string"),
    ("notes", "hello", "notes: a list of strings"),
    ("notes", ["a", 2], "notes: a list of strings"),
    ("natural", ["eight"], "natural: a list of two-card totals"),
    ("natural", 9, "natural: a list of two-card totals"),
    ("natural", [True, 8, 9], "natural: a list of two-card totals"),
    ("natural", [8], "natural: two-card totals of 0..9, 8 and 9 among them"),
    ("natural", [8, 9, 10], "natural: two-card totals of 0..9"),
    ("shoe", 6, "shoe: a table of keys"),
    ("shoe.decks", "six", "shoe.decks: a whole number, 1 or more"),
    ("shoe.decks", 6.0, "shoe.decks: a whole number"),
    ("shoe.decks", True, "shoe.decks: a whole number"),
    ("shoe.min_decks", 0, "shoe.min_decks: a whole number, 1 or more"),
    ("shoe.max_decks", "8", "shoe.max_decks: a whole number"),
    ("shoe.cut_card_min_from_end", -50, "shoe.cut_card_min_from_end: a whole number, 0 or more"),
    ("shoe.cut_card_default_from_end", "14", "shoe.cut_card_default_from_end: a whole number"),
    ("shoe.cut_card_default_from_end", 312, "shoe.cut_card_default_from_end: 312 cards from the end lies "
                                            "outside a shoe of 6 decks"),
    ("tableau", "DDD", "tableau: a table of keys"),
    ("tableau.player", 5, "tableau.player: expected a string of 8 letters"),
    ("tableau.player", _DROP, "missing 'tableau.player'"),
    ("tableau.banker", 5, "tableau.banker: a table of keys"),
    ("tableau.banker.7", 7, "tableau.banker.7: expected a string of 11 letters"),
    ("tableau.banker.3", _DROP, "missing 'tableau.banker.3'"),
    ("bets", [], "bets: a table of keys"),
    ("bets.banker", "1", "bets.banker: a table of keys"),
    ("bets.banker.commission", "3", "bets.banker.commission: a share of the win, 0 or more and less than 1"),
    ("bets.banker.commission", "1", "bets.banker.commission"),
    ("bets.banker.commission", "-1/20", "bets.banker.commission"),
    ("bets.banker.commission", True, "bets.banker.commission: True is not a number"),
    ("bets.banker.comission", "1/20", "bets.banker: 'comission' is not a key of this bet"),
    ("bets.banker.pays", _DROP, "bets.banker: missing 'pays'"),
    ("bets.banker.pays", "0", "bets.banker.pays: a win pays more than 0"),
    ("bets.player.pays", "-1", "bets.player.pays: a win pays more than 0"),
    ("bets.tie.pays", "eight", "bets.tie.pays: 'eight' is not a number"),
    ("bets.tie.pays", {"x": 1}, "bets.tie.pays"),
    ("bets.tie.on_tie", "0", "bets.tie: 'on_tie' is not a key of this bet"),
    ("bets.player.banker_six_pays", "1/2", "bets.player: 'banker_six_pays' is not a key of this bet"),
    ("bets.banker.banker_six_pays", "-1/2", "bets.banker.banker_six_pays: a win pays 0 or more"),
    ("bets.banker.on_tie", "-2", "bets.banker.on_tie: a tie takes the stake at most"),
    ("misdeal", True, "misdeal: a table of keys"),
    ("misdeal.correction", "false", "misdeal.correction: true or false (a TOML boolean, unquoted), not 'false'"),
    ("misdeal.correction", "no", "misdeal.correction: true or false"),
    ("misdeal.correction", 0, "misdeal.correction: true or false"),
    ("royal.rotation", "true", "royal.rotation: true or false"),
]


@pytest.mark.parametrize("key, value, message", BROKEN, ids=[f"{k}={v!r}" for k, v, _ in BROKEN])
def test_a_key_of_the_wrong_type_or_range_is_refused_naming_it(key, value, message):
    with pytest.raises(RulesetError) as caught:
        ruleset_from_dict(_set(_data(), key, value), "house.toml")
    said = str(caught.value)
    assert said.startswith("house.toml: ") and message in said and "\n" not in said, said


@pytest.mark.parametrize("key, taken, refused, read", [
    ("natural", [[7, 8, 9], [9, 8], [0, 8, 9]], [[8], [8, 9, 10], [-1, 8, 9]], lambda r: r.natural),
    ("bets.banker.commission", ["0", "1/20", 0, "0.05", "99/100"], ["1", "3", "-1/20", 1.5],
     lambda r: r.bets["banker"].commission),
    ("bets.banker.on_tie", ["0", "-1/2", "-1"], ["-2", "-3/2"], lambda r: r.bets["banker"].on_tie),
    ("bets.banker.banker_six_pays", ["0", "1/2", "1"], ["-1/2"], lambda r: r.bets["banker"].banker_six_pays),
    ("misdeal.correction", [True, False], ["false", "true", 0, 1], lambda r: r.misdeal_correction),
    ("royal.rotation", [True, False], ["false", 1], lambda r: r.rotation),
    ("shoe.cut_card_min_from_end", [0, 6, 14], [-1, -50, 6.5], lambda r: r.cut_card_min_from_end),
    ("shoe.cut_card_default_from_end", [14, 311], [312, -1, "14"], lambda r: r.cut_card_default_from_end),
])
def test_a_value_within_its_range_is_taken_and_one_outside_refused(key, taken, refused, read):
    for value in taken:
        ruleset = ruleset_from_dict(_set(_data(), key, value), "house.toml")
        expected = frozenset(value) if isinstance(value, list) else value
        assert read(ruleset) == (Fraction(str(expected)) if isinstance(expected, str) else expected), value
    for value in refused:
        with pytest.raises(RulesetError, match=f"^house.toml: {key}"):
            ruleset_from_dict(_set(_data(), key, value), "house.toml")


@pytest.mark.parametrize("written, wrong, message", [
    ("\ndecks = 6\n", '\ndecks = "six"\n', 'shoe.decks: a whole number, 1 or more, not \'six\''),
    ("natural = [8, 9]", 'natural = ["eight"]', "natural: a list of two-card totals"),
    ('player = "D D D D D D S S"', "player = 5", "tableau.player: expected a string of 8 letters"),
    ('7 = "S S S S S S S S S S   S"', "7 = 7", "tableau.banker.7: expected a string of 11 letters"),
    ("correction = true", 'correction = "false"', "misdeal.correction: true or false"),
    ('commission = "0"', 'commission = "3"', "bets.banker.commission: a share of the win"),
])
def test_rules_check_and_config_check_say_it_in_one_line(tmp_path, capsys, written, wrong, message):
    from shoed.cli import main

    text = (resources.files("shoed.rules") / "rulesets" / "punto-banco.toml").read_text()
    assert text.count(written) == 1
    ruleset = tmp_path / "house.toml"
    ruleset.write_text(text.replace(written, wrong))
    config = tmp_path / "shoed.toml"
    config.write_text(f'table = "t1"\nruleset = "{ruleset}"\n')
    for argv in (["rules", "check", "--ruleset", str(ruleset), "--json", "2S", "3C", "4D", "5H"],
                 ["config", "check", str(config)]):
        assert main(argv) == 2, argv
        out, err = capsys.readouterr()
        assert out == "" and err.startswith(f"shoed: {ruleset}: {message}") and err.count("\n") == 1, err
