"""`shoed report` on a journal altered and sealed again: an unkeyed (sha256) journal can be, by
whoever can write its files (docs/journal.md), and `shoed journal verify` then says intact.

The report takes every field for what it is: a wrong type, a result without a winner, a reason of
a million characters or thousands of coups give a report (or its one-line error), never a
traceback nor an image without bound; strings never reach the terminal or the page raw; and the
page and the image say what an unkeyed journal's check proves.
"""

from __future__ import annotations

import hashlib
import shutil
import time
from pathlib import Path

import msgspec
import pytest

from harness.processes import run_shoed
from shoed.display.html import report_html
from shoed.display.summary import summarize

pytest.importorskip("PIL", reason="the PNG needs Pillow: pip install 'shoed[report]' (the test extra has it)")

CORPUS = Path(__file__).parents[1] / "corpus" / "journals" / "punto-banco"
canonical = msgspec.json.Encoder(order="sorted").encode
ESC = "\x1b]0;OWNED\x07\x1b[31mRED\x9b\u202e"


def resealed(tmp_path: Path, mutate, every_file: bool = False) -> Path:
    """The corpus journal with `mutate(event)` applied to the events of its last file (a dict, a list
    of dicts or None for each; with `every_file`, of every file, one for one), the seqs of that file
    numbered again and the chain sealed again."""
    dest = tmp_path / "journal"
    dest.mkdir()
    files = sorted(CORPUS.glob("*.jsonl"))
    prev = "0" * 64
    for path in files:
        last = path == files[-1]
        nxt = None
        out = []
        for line in path.read_bytes().splitlines():
            rec = msgspec.json.decode(line)
            rec.pop("hash")
            rec["prev"] = prev
            if (last or every_file) and rec.get("kind") == "step":
                events = []
                for e in rec["events"]:
                    m = mutate(e)
                    events.extend(m if isinstance(m, list) else [] if m is None else [m])
                for e in events if last else ():
                    if isinstance(e.get("seq"), int):
                        e["seq"] = nxt if nxt is not None else e["seq"]
                        nxt = e["seq"] + 1
                rec["events"] = events
            rec["hash"] = prev = hashlib.sha256(canonical(rec)).hexdigest()
            out.append(canonical(rec))
        (dest / path.name).write_bytes(b"\n".join(out) + b"\n")
    assert run_shoed("journal", "verify", str(dest)).returncode == 0
    return dest


def _set(kind: str, **fields):
    def mutate(e):
        return e | fields if e.get("kind") == kind else e
    return mutate


def _void_one_coup(e):
    if e.get("kind") == "coup.result" and e.get("coup") == 5:
        return [e, {k: e[k] for k in ("table", "shoe", "coup", "mono_ns", "utc", "seq")}
                | {"kind": "coup.void", "reason": "r", "by": 7, "utc": 5}]
    return e


def _many_results(e):
    if e.get("kind") == "coup.result" and e.get("coup") == 5:
        return [e] + [e | {"coup": 1000 + i} for i in range(3000)]
    return e


CASES = {
    "void_by_and_utc_ints": _void_one_coup,
    "misdeal_card_int": lambda e: e | {"kind": "misdeal", "misdeal": {"id": 1, "kind": "k", "card": 5,
                                                                       "correctable": True, "correction": "c"}}
    if e.get("kind") == "coup.opened" and e.get("coup") == 3 else e,
    "excess_list": lambda e: e | {"reconciliation": e["reconciliation"] | {"excess": ["AS"]}}
    if e.get("kind") == "shoe.closed" else e,
    "result_without_winner": lambda e: {k: v for k, v in e.items() if k != "winner"}
    if e.get("kind") == "coup.result" and e.get("coup") == 3 else e,
    "long_void_reason": lambda e: [e, {k: e[k] for k in ("table", "shoe", "coup", "mono_ns", "utc", "seq")}
                                   | {"kind": "coup.void", "reason": "x" * 1_100_000}]
    if e.get("kind") == "coup.result" and e.get("coup") == 5 else e,
    "thousands_of_results": _many_results,
    "shoe_id_escapes": lambda e: e | {"shoe": "S2" + ESC} if e.get("shoe") else e,
}


@pytest.mark.timeout(180)
@pytest.mark.parametrize("case", sorted(CASES))
def test_a_resealed_journal_gives_a_report_or_one_line(tmp_path, case):
    journal = resealed(tmp_path, CASES[case], every_file=case == "shoe_id_escapes")
    png, page = tmp_path / "shoe.png", tmp_path / "shoe.html"
    started = time.monotonic()
    proc = run_shoed("report", str(journal), "--out", str(png), "--html", str(page), timeout=150)
    took = time.monotonic() - started
    assert "Traceback" not in proc.stderr and proc.returncode == 0, proc.stderr[-2000:]
    assert not any(c in proc.stdout + proc.stderr for c in ("\x1b", "\x07", "\x9b", "\u202e"))
    from PIL import Image

    with Image.open(png) as image:
        assert image.width <= 8192 and image.height <= 4096, image.size
    html = page.read_text(encoding="utf-8")
    assert "proved against accidents only" in html and "<script" not in html
    assert took < 60, took
    if case == "thousands_of_results":
        assert "(the last 80 of" in html  # the board says what it leaves out
    if case == "result_without_winner":
        assert "without a winner" in html
    listed = run_shoed("report", str(journal), "--list")
    assert listed.returncode == 0 and not any(c in listed.stdout for c in ("\x1b", "\x07", "\x9b", "\u202e"))
    if case == "shoe_id_escapes":
        shoe = next(line.split("\t")[1] for line in listed.stdout.splitlines() if "\tS2" in line)
        assert shoe.startswith("S2\\x1b]0;OWNED")
        again = run_shoed("report", str(journal), "--shoe", shoe, "--html", str(tmp_path / "again.html"))
        assert again.returncode == 0 and f"shoe {shoe} of table t1" in again.stdout  # the id as listed selects it


def test_the_page_escapes_every_value_a_seq_of_text_included():
    records = [
        {"kind": "journal_file", "alg": "sha256", "table": "t1", "file_seq": 1, "jseq": 1, "hash": "h0"},
        {"kind": "step", "jseq": 2, "hash": "h1", "events": [
            {"kind": "table.note", "table": "t1", "shoe": "S", "seq": "<script>alert(1)</script>"},
            {"kind": "shoe.opened", "table": "t1", "shoe": "S", "seq": 2, "decks": 8, "ruleset": "<b>r</b>"},
            {"kind": "coup.result", "table": "t1", "shoe": "S", "seq": 3, "coup": 1, "winner": "banker"},
            {"kind": "alarm", "table": "t1", "shoe": "S", "seq": 4, "alarm": "<i>x</i>", "active": True},
        ]},
    ]
    summary = summarize(records)
    assert summary.seq == (2, 4) and summary.key == "sha256"
    html = report_html(summary)
    assert "<script" not in html and "<b>" not in html and "<i>" not in html
    assert "&lt;b&gt;r&lt;/b&gt;" in html and "(records sealed with sha256)" in html
    assert "proved against accidents only" in html


def test_the_board_of_a_real_shoe_leaves_nothing_out(tmp_path):
    journal = tmp_path / "journal"
    shutil.copytree(CORPUS, journal)
    proc = run_shoed("report", str(journal), "--html", str(tmp_path / "a.html"))
    assert proc.returncode == 0, proc.stderr
    assert "columns)" not in (tmp_path / "a.html").read_text(encoding="utf-8")
