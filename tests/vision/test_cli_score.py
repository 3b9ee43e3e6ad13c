"""`shoed vision score`: a test lab's labelled pictures counted right, wrong and refused.

The labels come from the file names or a labels file; the counts are by rank,
suit and folder, with every wrong card named; the exit status is 1 where a card
was read wrong. The end-to-end tests read generated photographs with the real
recognizer, one of them deliberately labelled with another card.
"""

from __future__ import annotations

import json

import cv2
import pytest

from shoed.cli import CommandError
from shoed.commands import vision as vision_commands
from shoed.commands.vision import NO_CARD, label_of_name, outcome, read_labels, tally


@pytest.mark.parametrize(("name", "label"), [
    ("IMG_0042_QS.jpg", "QS"),
    ("decks/anglo/10H.png", "TH"),
    ("TD.png", "TD"),
    ("casts_003_8H.jpg", "8H"),
    ("AS-then-KD.jpeg", "KD"),  # the last card named
    ("frame 12 AC.png", "AC"),
    ("photo.jpg", None),
    ("my_as_card.jpg", None),  # lower case: words, not cards
    ("10h.jpg", None),
    ("1H.jpg", None),
    ("QSX.jpg", None),  # a card inside a longer token
    ("2024_0C.jpg", None),
])
def test_label_of_name(name, label):
    assert label_of_name(name) == label


def test_labels_file(tmp_path):
    (tmp_path / "sub").mkdir()
    labels = tmp_path / "labels.csv"
    labels.write_text("file,card\n# a comment\n\nsub/a.jpg,10d\nb, with comma.jpg , QS \nc.png\t-\nd.png,none\n")
    got = read_labels(str(labels))
    assert got == {
        str((tmp_path / "sub" / "a.jpg").resolve()): "TD",
        str((tmp_path / "b, with comma.jpg").resolve()): "QS",
        str((tmp_path / "c.png").resolve()): NO_CARD,
        str((tmp_path / "d.png").resolve()): NO_CARD,
    }


@pytest.mark.parametrize(("text", "error"), [
    ("a.jpg,ZZ\n", "line 1: unknown card 'ZZ'"),
    ("file,card\nonly-a-name\n", "line 2: write FILE,CARD"),
    (",QS\n", "line 1: write FILE,CARD"),
])
def test_labels_file_errors(tmp_path, text, error):
    labels = tmp_path / "labels.csv"
    labels.write_text(text)
    with pytest.raises(CommandError, match=error):
        read_labels(str(labels))


def test_a_labels_file_that_never_ends_is_refused_not_read_into_memory(monkeypatch, tmp_path):
    monkeypatch.setattr(vision_commands, "LABELS_MAX", 1 << 20)
    with pytest.raises(CommandError, match="cannot read labels /dev/zero: not a regular file"):
        read_labels("/dev/zero")
    large = tmp_path / "labels.csv"
    large.write_bytes(b"a.jpg,AS\n" * ((1 << 20) // 9 + 1))
    with pytest.raises(CommandError, match="go on past 1 MB"):
        read_labels(str(large))


def test_labels_file_missing(tmp_path):
    with pytest.raises(CommandError, match="cannot read labels"):
        read_labels(str(tmp_path / "none.csv"))


def test_tally():
    def entry(label, card, folder="a", reason=None):
        return {"file": f"{folder}/{label}.jpg", "label": label, "card": card, "confidence": 0.95 if card else 0.0,
                "outcome": outcome(label, card), "folder": folder, **({"reason": reason} if reason else {})}

    entries = [
        entry("AS", "AS"), entry("TD", "TD"), entry("TD", "JD", "b"), entry("TD", None, "b", "too_small"),
        entry("QC", None, "b", "corner indices disagree (QC or QS)"), entry("QC", None, "a", "too_small"),
        entry(NO_CARD, None, "a", "no card found"), entry(NO_CARD, "8H", "a"),
    ]
    counts = tally(entries)
    assert (counts["pictures"], counts["right"], counts["wrong"], counts["refused"]) == (6, 2, 1, 3)
    assert counts["right_share"] == round(2 / 6, 4)
    assert counts["no_card_meant"] == {"pictures": 2, "right": 0, "wrong": 1, "refused": 1}
    assert counts["refusals"] == {"too_small": 2, "corner indices disagree": 1, "no card found": 1}
    assert counts["by_rank"] == {"A": {"pictures": 1, "right": 1, "wrong": 0, "refused": 0},
                                 "10": {"pictures": 3, "right": 1, "wrong": 1, "refused": 1},
                                 "Q": {"pictures": 2, "right": 0, "wrong": 0, "refused": 2}}
    assert list(counts["by_suit"]) == ["C", "D", "S"]
    assert counts["by_folder"]["b"] == {"pictures": 3, "right": 0, "wrong": 1, "refused": 2}
    assert counts["wrong_cards"] == [
        {"file": "b/TD.jpg", "label": "TD", "card": "JD", "confidence": 0.95},
        {"file": "a/-.jpg", "label": NO_CARD, "card": "8H", "confidence": 0.95},
    ]
    assert tally([])["right_share"] is None


@pytest.fixture(scope="module")
def lab(tmp_path_factory, classic_shots, hard_shots):
    """Three folders as a test lab might lay them out: cards named in the file names, one of them
    under another card's name; a picture with no card, labelled in a labels file."""
    root = tmp_path_factory.mktemp("lab")
    (root / "deck-one").mkdir()
    (root / "deck-two").mkdir()
    shots = classic_shots[:3]
    for i, shot in enumerate(shots[:2]):
        cv2.imwrite(str(root / "deck-one" / f"IMG_{i:04d}_{shot.card}.jpg"), shot.image)
    other = next(s.card for s in classic_shots if s.card != shots[2].card)
    cv2.imwrite(str(root / "deck-two" / f"IMG_0002_{other}.jpg"), shots[2].image)  # labelled wrong on purpose
    cv2.imwrite(str(root / "deck-two" / "table.png"), hard_shots[0].image)
    (root / "deck-two" / "notes.txt").write_text("not a picture: not looked at")
    (root / "labels.csv").write_text("deck-two/table.png,-\n")
    return {"root": root, "cards": [s.card for s in shots], "other": other}


def test_score_json(shoed_cli, lab):
    root = lab["root"]
    proc = shoed_cli("vision", "score", str(root), "--labels", str(root / "labels.csv"), "--json", timeout=180)
    assert proc.returncode == 1, proc.stderr  # the picture labelled with another card is read as its own
    out = json.loads(proc.stdout)
    assert [e["file"] for e in out["entries"]] == sorted(
        [str(p) for p in (root / "deck-one").glob("*.jpg")]) + [
        str(root / "deck-two" / f"IMG_0002_{lab['other']}.jpg"), str(root / "deck-two" / "table.png")]
    first, second, mislabelled, table = out["entries"]
    assert {first["label"], second["label"]} == set(lab["cards"][:2])
    assert first["outcome"] == second["outcome"] == "right" and first["card"] == first["label"]
    assert mislabelled["card"] == lab["cards"][2] and mislabelled["outcome"] == "wrong"
    assert table["label"] == NO_CARD and table["card"] is None and table["outcome"] == "refused"
    assert table["reason"] == "no card found"
    assert (out["pictures"], out["right"], out["wrong"], out["refused"]) == (3, 2, 1, 0)
    assert out["no_card_meant"] == {"pictures": 1, "right": 0, "wrong": 0, "refused": 1}
    assert out["by_folder"] == {"deck-one": {"pictures": 2, "right": 2, "wrong": 0, "refused": 0},
                                "deck-two": {"pictures": 1, "right": 0, "wrong": 1, "refused": 0}}
    assert out["wrong_cards"] == [{"file": mislabelled["file"], "label": lab["other"], "card": lab["cards"][2],
                                   "confidence": mislabelled["confidence"]}]


def test_score_text_and_exit(shoed_cli, lab):
    root = lab["root"]
    good = sorted(str(p) for p in (root / "deck-one").glob("*.jpg"))
    proc = shoed_cli("vision", "score", *good, timeout=180)
    assert proc.returncode == 0, proc.stderr
    lines = proc.stdout.splitlines()
    assert lines[0] == "2 pictures with a card to read: 2 right (100.0%), 0 wrong, 0 refused"
    assert not any(line.startswith("WRONG") for line in lines)
    proc = shoed_cli("vision", "score", str(root / "deck-two"), "--labels", str(root / "labels.csv"), timeout=180)
    assert proc.returncode == 1
    assert f"WRONG {root / 'deck-two'}/IMG_0002_{lab['other']}.jpg: {lab['other']}, read as {lab['cards'][2]}" \
        in proc.stdout


def test_a_name_naming_two_cards_is_said_and_a_label_overrides_it(shoed_cli, lab, tmp_path):
    import shutil

    shot = next((lab["root"] / "deck-one").glob("*.jpg"))
    card = shot.stem.rsplit("_", 1)[1]
    other = "KS" if card != "KS" else "QS"
    named = tmp_path / f"{card}-read-as-{other}.jpg"  # the truth first, then what it was once read as
    shutil.copy(shot, named)
    proc = shoed_cli("vision", "score", str(named), "--json", timeout=180)
    assert proc.returncode == 1 and json.loads(proc.stdout)["entries"][0]["label"] == other  # the last, as said
    assert "name more than one card, and the last is taken" in proc.stderr and named.name in proc.stderr
    (tmp_path / "labels.csv").write_text(f"{named.name},{card}\n")
    proc = shoed_cli("vision", "score", str(named), "--labels", str(tmp_path / "labels.csv"), timeout=180)
    assert proc.returncode == 0 and "note:" not in proc.stderr


def test_score_needs_labels(shoed_cli, lab):
    proc = shoed_cli("vision", "score", str(lab["root"]), timeout=60)  # table.png has no label without the file
    assert proc.returncode == 2
    assert proc.stderr.count("\n") == 1
    assert "no card given for 1 picture(s), the first" in proc.stderr and "table.png" in proc.stderr
    assert proc.stdout == ""


def test_score_no_pictures(shoed_cli, tmp_path):
    proc = shoed_cli("vision", "score", str(tmp_path), timeout=60)
    assert proc.returncode == 2
    assert "no pictures in" in proc.stderr


def test_score_missing_path(shoed_cli, tmp_path):
    proc = shoed_cli("vision", "score", str(tmp_path / "IMG_0001_QS.jpg"), timeout=60)
    assert proc.returncode == 2
    assert f"no such picture or folder: {tmp_path / 'IMG_0001_QS.jpg'}" in proc.stderr
