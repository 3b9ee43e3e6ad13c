"""`shoed report`: a shoe's board and statistics from a real journal, as PNG and HTML.

The journal is the one the daemon wrote while dealing the virtual shoe
(tests/display/conftest.py). The figures of the report are checked against
that journal's own events, counted here independently; the PNG is decoded
with OpenCV (not the library that wrote it) and every bead of the bead plate
is read back by its colour (roads.py BP1, BP2: every coup, in order, columns
of six).
"""

from __future__ import annotations

import os
import re
import shutil
import stat
import threading
import xml.etree.ElementTree as ET
from collections import Counter

import pytest

from shoed.display.board import CELL, Circle, scoreboard, statistics_lines
from shoed.display.html import report_html
from shoed.display.summary import shoes_in, summarize
from shoed.journal import iter_records
from shoed.journal.recall import events_of
from shoed.table.results import results_from_events
from tests.conftest import run_shoed
from tests.display.test_state import scripted_shoe

pytest.importorskip("PIL", reason="the PNG needs Pillow: pip install 'shoed[report]' (the test extra has it)")
cv2 = pytest.importorskip("cv2", reason="the PNG is decoded with OpenCV, from the test extra")


def journal_events(path) -> list[dict]:
    return [e for r in iter_records(path) if r.get("kind") == "step" for e in events_of(r)]


def expected_counts(events: list[dict]) -> dict:
    """The report's figures, counted straight from the journal's events."""
    shoe = next(e["shoe"] for e in reversed(events) if e["kind"] == "shoe.opened")
    mine = [e for e in events if e.get("shoe") == shoe]
    results = [e for e in mine if e["kind"] == "coup.result"]
    voided = {e["coup"] for e in mine if e["kind"] == "coup.void"}
    kept = [e for e in results if e["coup"] not in voided]  # a coup voided after its result is no result
    winners = Counter(e["winner"] for e in kept)
    return {
        "coups": len({e["coup"] for e in results} | voided),
        "results": len(kept),
        "banker": winners["banker"], "player": winners["player"], "tie": winners["tie"],
        "banker_pairs": sum(e["banker_pair"] for e in kept), "player_pairs": sum(e["player_pair"] for e in kept),
        "naturals": sum(e["natural"] for e in kept),
        "voids": len(voided), "misdeals": sum(e["kind"] == "misdeal" for e in mine),
        "misdeals_corrected": sum(e["kind"] == "misdeal.corrected" for e in mine),
        "burned": sum(e["kind"] == "shoe.burn" for e in mine),
    }


def data(html: str, attribute: str) -> dict[str, str]:
    return dict(re.findall(rf'{attribute}="([^"]+)">([^<]*)<', html))


@pytest.fixture(scope="module")
def written(recorded_shoe, tmp_path_factory):
    out = tmp_path_factory.mktemp("report")
    proc = run_shoed("report", str(recorded_shoe.journal), "--out", str(out / "shoe.png"), "--html",
                     str(out / "shoe.html"))
    assert proc.returncode == 0, proc.stderr
    return out, proc.stdout


def test_summary_counts_what_the_journal_holds(recorded_shoe):
    events = journal_events(recorded_shoe.journal)
    summary = summarize(iter_records(recorded_shoe.journal))
    assert summary.counts() == expected_counts(events)
    closed = next(e for e in events if e["kind"] == "shoe.closed")
    assert summary.reconciliation == closed["reconciliation"] and summary.reconciliation["balanced"] is True
    assert summary.counts()["coups"] == closed["reconciliation"]["coups"]
    # Provenance: the hash of the last record that holds the shoe's events.
    holding = [r for r in iter_records(recorded_shoe.journal) if r.get("kind") == "step"
               and any(e.get("shoe") == summary.shoe for e in events_of(r))]
    assert summary.provenance.last_hash == holding[-1]["hash"] and summary.provenance.records == len(holding)


def test_png_decodes_at_the_boards_size_with_every_bead_in_its_colour(recorded_shoe, written):
    out, said = written
    image = cv2.imread(str(out / "shoe.png"), cv2.IMREAD_COLOR)
    assert image is not None, "the PNG does not decode"
    board = scoreboard(summarize(iter_records(recorded_shoe.journal)))
    assert image.shape == (board.height, board.width, 3)
    assert f"({board.width}x{board.height})" in said
    results = results_from_events(journal_events(recorded_shoe.journal))
    beads = [s for s in board.shapes if isinstance(s, Circle) and s.r == CELL * 0.42]
    assert len(beads) == len(results) > 50
    colours = {"B": (0x28, 0x28, 0xC6), "P": (0xC0, 0x65, 0x15), "T": (0x32, 0x7D, 0x2E)}  # BGR
    for bead, outcome in zip(beads, results, strict=True):
        # Lower left of the disc: clear of its letter and of the pair and natural dots.
        x, y = round(bead.cx - 0.22 * CELL), round(bead.cy + 0.22 * CELL)
        pixel = tuple(int(v) for v in image[y, x])
        nearest = min(colours, key=lambda k: sum((a - b) ** 2 for a, b in zip(colours[k], pixel, strict=True)))
        assert nearest == outcome.winner, (bead, pixel)


def test_html_holds_the_journals_counts_and_nothing_from_elsewhere(recorded_shoe, written):
    out, _ = written
    html = (out / "shoe.html").read_text(encoding="utf-8")
    events = journal_events(recorded_shoe.journal)
    stats = {k: int(v) for k, v in data(html, "data-stat").items()}
    assert stats == expected_counts(events)
    closed = next(e for e in events if e["kind"] == "shoe.closed")["reconciliation"]
    recon = data(html, "data-recon")
    for key in ("capacity", "seen", "in_coups", "in_void_coups", "burned", "discarded", "left_in_shoe",
                "unaccounted", "coups"):
        assert recon[key] == str(closed[key]), key
    assert recon["balanced"] == "yes"
    svg = html[html.index("<svg"):html.index("</svg>") + len("</svg>")]
    ET.fromstring(svg)  # well-formed
    assert svg.count('r="11.76"') == stats["results"]  # one bead per result
    # Self-contained: no scripts, no links, nothing fetched.
    assert not re.search(r"<script|<link|<img|src=|url\(|@import", html)
    assert set(re.findall(r"https?://[^\"' ]+", html)) == {"http://www.w3.org/2000/svg"}


def test_list_and_choose_a_shoe(recorded_shoe, tmp_path):
    listed = run_shoed("report", str(recorded_shoe.journal), "--list")
    assert listed.returncode == 0
    table, shoe, coups = listed.stdout.strip().splitlines()[-1].split("\t")
    proc = run_shoed("report", str(recorded_shoe.journal), "--shoe", shoe, "--html", str(tmp_path / "a.html"))
    assert proc.returncode == 0 and f"shoe {shoe} of table {table}: {coups}" in proc.stdout
    assert not (tmp_path / "a.png").exists()


@pytest.mark.parametrize(
    "case, args, says",
    [
        ("nothing to write", [], "say what to write"),
        ("unknown shoe", ["--shoe", "19990101T000000-9", "--out", "{tmp}/x.png"], "no shoe 19990101T000000-9"),
        ("unknown table", ["--table", "t9", "--out", "{tmp}/x.png"], "no shoe was opened in this journal at table t9"),
        ("unwritable output", ["--out", "{tmp}/no/such/dir/x.png"], "cannot write"),
    ],
)
def test_bad_requests_exit_2_with_one_line(recorded_shoe, tmp_path, case, args, says):
    args = [a.replace("{tmp}", str(tmp_path)) for a in args]
    proc = run_shoed("report", str(recorded_shoe.journal), *args)
    assert proc.returncode == 2 and proc.stderr.count("\n") == 1 and says in proc.stderr, proc.stderr
    assert list(tmp_path.iterdir()) == []  # nothing half written


def test_a_journal_that_is_not_intact_is_refused(recorded_shoe, tmp_path):
    copy = tmp_path / "journal"
    shutil.copytree(recorded_shoe.journal, copy)
    target = sorted(copy.glob("*.jsonl"))[-1]
    target.chmod(0o644)
    raw = bytearray(target.read_bytes())
    raw[len(raw) // 2] ^= 0x01
    target.write_bytes(bytes(raw))
    proc = run_shoed("report", str(copy), "--out", str(tmp_path / "x.png"))
    assert proc.returncode == 2 and "not intact" in proc.stderr and "shoed journal verify" in proc.stderr
    assert not (tmp_path / "x.png").exists()
    missing = run_shoed("report", str(tmp_path / "none"), "--out", str(tmp_path / "x.png"))
    assert missing.returncode == 2 and "no journal" in missing.stderr


def test_a_journal_whose_last_shoe_was_removed_is_refused(recorded_shoe, tmp_path):
    # Every file left intact, the last shoe's taken away: the verified mark says the journal went
    # further, as `shoed journal verify` holds it; no report shows the shoe as if never dealt.
    copy = tmp_path / "journal"
    shutil.copytree(recorded_shoe.journal, copy)
    last = sorted(copy.glob("*.jsonl"))[-1]
    last.chmod(0o644)
    last.unlink()
    assert run_shoed("journal", "verify", str(copy)).returncode == 1
    for args in (["--list"], ["--out", str(tmp_path / "x.png")]):
        proc = run_shoed("report", str(copy), *args)
        assert proc.returncode == 2 and "not intact" in proc.stderr and "records were removed" in proc.stderr, proc
    assert not (tmp_path / "x.png").exists()


def test_voids_misdeals_and_an_open_shoe(tmp_path):
    # The scripted shoe of test_state: a coup voided after its result, an extra card put back,
    # an unreadable card entered by hand. Cut before the close, the shoe has no reconciliation yet.
    events, _ = scripted_shoe()
    records = [{"kind": "step", "jseq": n, "hash": f"h{n}", "events": [e]} for n, e in enumerate(events, 1)]
    summary = summarize(records)
    assert summary.counts() == expected_counts(events)
    # Each void with its reason, who voided it (the command key's name) and when.
    void = next(e for e in events if e["kind"] == "coup.void")
    assert [(v.coup, v.reason, v.by, v.utc) for v in summary.voids] == [
        (4, "dealer exposed a card", "pit", void["utc"])]
    assert [(m.kind, m.corrected) for m in summary.misdeals] == [("extra_card", "return_card"),
                                                                 ("unreadable_card", "enter_card")]
    # Each correction with its key and its time; an unread card as the one entered for it.
    fixes = {e["misdeal"]: e for e in events if e["kind"] == "misdeal.corrected"}
    for line in summary.misdeals:
        fix = fixes[line.id]
        assert (line.corrected_by, line.corrected_utc) == (fix.get("by"), fix["utc"]) and line.utc
    entered = next(m for m in summary.misdeals if m.kind == "unreadable_card")
    assert entered.card == fixes[entered.id]["card"] is not None
    assert dict(summary.alarms)["tamper"] == 1
    html = report_html(summary)
    assert "dealer exposed a card" in html and "return_card" in html and "unreadable_card" in html
    assert f"<td>{summary.voids[0].who}</td><td>{void['utc']}</td>" in html
    assert f"<td>{entered.corrected_utc}</td></tr>" in html and f"<td>{entered.card}</td>" in html
    # The voided coup's cards are a category of the reconciliation of their own: shown, so every card adds up.
    closed = next(e for e in events if e["kind"] == "shoe.closed")["reconciliation"]
    recon = data(html, "data-recon")
    assert int(recon["in_void_coups"]) == closed["in_void_coups"] > 0
    assert sum(int(recon[k]) for k in ("in_coups", "in_void_coups", "burned", "discarded")) == int(recon["seen"])
    assert ("Dealt in void coups", str(closed["in_void_coups"])) in statistics_lines(summary)[1]
    cut = next(i for i, r in enumerate(records) if r["events"][0]["kind"] == "shoe.closed")
    open_shoe = summarize(records[:cut])
    assert open_shoe.reconciliation is None and open_shoe.notes
    assert "No reconciliation" in report_html(open_shoe)
    from shoed.display.png import write_png

    board = scoreboard(open_shoe)
    write_png(board, tmp_path / "open.png")
    image = cv2.imread(str(tmp_path / "open.png"), cv2.IMREAD_COLOR)
    assert image.shape == (board.height, board.width, 3)
    assert shoes_in(records) == [("t1", summary.shoe, summary.coups)]


@pytest.mark.timeout(120)
def test_the_html_into_a_pipe_and_onto_a_full_device(recorded_shoe, tmp_path):
    pipe = tmp_path / "shoe.html"
    os.mkfifo(pipe)
    got: list[bytes] = []
    reader = threading.Thread(target=lambda: got.append(pipe.read_bytes()))
    reader.start()
    proc = run_shoed("report", str(recorded_shoe.journal), "--html", str(pipe))
    reader.join(timeout=60)
    assert proc.returncode == 0, proc.stderr
    assert got and got[0].startswith(b"<!DOCTYPE html>") and stat.S_ISFIFO(os.lstat(pipe).st_mode)
    full = run_shoed("report", str(recorded_shoe.journal), "--html", "/dev/full")
    assert full.returncode == 2 and full.stderr == "shoed: cannot write /dev/full: No space left on device\n"
    assert stat.S_ISCHR(os.stat("/dev/full").st_mode)


def test_the_html_onto_standard_output_is_the_page_alone(recorded_shoe):
    """`--html /dev/stdout`: standard output holds the page, whole, and nothing else; the summary
    line goes to stderr."""
    proc = run_shoed("report", str(recorded_shoe.journal), "--html", "/dev/stdout")
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.startswith("<!DOCTYPE html>") and proc.stdout.rstrip().endswith("</html>")
    assert "coups" in proc.stderr and "wrote /dev/stdout" in proc.stderr
