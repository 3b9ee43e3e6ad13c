"""`shoed rules list` and `shoed rules check`: the command-line contract."""

import json

import pytest

from tests.conftest import run_shoed

CONTRACT_FIELDS = {
    "complete", "next", "player_cards", "banker_cards", "player_total", "banker_total", "winner",
    "natural", "player_pair", "banker_pair", "settlement", "misdeal",
}


def check(*args):
    proc = run_shoed("rules", "check", *args, "--json", check=True) if "--json" not in args else None
    return json.loads(proc.stdout)


def test_list_names_all_five_rulesets():
    out = run_shoed("rules", "list", check=True).stdout
    for name in ["punto-banco", "macau-casinos-austria", "mini-baccarat-luzern", "macau-statutory", "baccarat-royal"]:
        assert name in out


def test_list_names_each_rulesets_document_as_kept_here():
    from pathlib import Path

    listed = json.loads(run_shoed("rules", "list", "--json", check=True).stdout)
    root = Path(__file__).resolve().parents[2]
    assert len(listed) == 5
    for ruleset in listed:
        assert ruleset["document"].startswith("docs/rules/") and (root / ruleset["document"]).is_file()
        assert ruleset["source"]  # the document's original name, kept as data
        assert f"[{ruleset['document']}]" in run_shoed("rules", "list", check=True).stdout


def test_complete_coup_has_every_contract_field():
    report = check("--ruleset", "macau-casinos-austria", "TS", "3C", "KS", "3D", "5H")
    assert CONTRACT_FIELDS <= set(report)
    assert report["complete"] is True and report["next"] is None
    assert report["player_cards"] == ["TS", "KS", "5H"] and report["banker_cards"] == ["3C", "3D"]
    assert (report["player_total"], report["banker_total"], report["winner"]) == (5, 6, "banker")
    assert report["settlement"] == {"player": -1, "banker": 0.5, "tie": -1, "player_pair": -1, "banker_pair": 11}
    assert report["misdeal"] is None


def test_incomplete_coup_says_who_is_next():
    report = check("--ruleset", "punto-banco", "10h", "3c")
    assert report["complete"] is False and report["next"] == "player" and report["winner"] is None


def test_royal_decision_and_decide_option():
    assert check("--ruleset", "baccarat-royal", "2S", "3C", "2D", "3D")["next"] == "decision:player"
    after = check("--ruleset", "baccarat-royal", "--decide", "player=draw", "2S", "3C", "2D", "3D")
    assert after["next"] == "player"


def test_extra_card_misdeal():
    report = check("--ruleset", "punto-banco", "6S", "7H", "TC", "KD", "2C")
    assert report["complete"] is True
    assert report["misdeal"]["kind"] == "extra_card" and report["misdeal"]["card_index"] == 4
    assert report["misdeal"]["correctable"] is True and report["misdeal"]["reason"]


def test_closed_while_card_due_is_missing_card():
    report = check("--ruleset", "punto-banco", "--closed", "TS", "3C", "KS", "3D")
    assert report["misdeal"]["kind"] == "missing_card" and report["misdeal"]["card_index"] == 4


def test_suit_first_notation_accepted():
    assert check("--ruleset", "punto-banco", "H3", "S10")["player_cards"] == ["3H"]


@pytest.mark.parametrize(
    "args",
    [
        ["--ruleset", "punto-banco", "3X"],
        ["--ruleset", "no-such-game", "3H"],
        ["--ruleset", "baccarat-royal", "--decide", "player=maybe", "3H"],
    ],
)
def test_bad_input_exits_nonzero_with_one_line(args):
    proc = run_shoed("rules", "check", *args, "--json")
    assert proc.returncode != 0
    assert proc.stdout == ""
    assert len(proc.stderr.strip().splitlines()) == 1
