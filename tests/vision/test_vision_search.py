"""benchmarks/vision_search.py, run small: aces in 96 px frames of every held-out
lettering and deck design, uncovered. It must finish, count every frame, and find
no wrong card (its exit status is 1 where it finds one)."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def test_the_wrong_card_search_runs_and_finds_none():
    out = subprocess.run(
        [sys.executable, str(ROOT / "benchmarks" / "vision_search.py"), "--ranks", "A", "--sides", "96",
         "--cover", "0"],
        capture_output=True, text=True, timeout=600, cwd=ROOT,
    )
    assert out.returncode == 0, out.stdout + out.stderr
    summary = re.search(r"all: (\d+) frames, right (\d+) .*wrong (\d+), refused (\d+)", out.stdout)
    assert summary is not None, out.stdout
    frames, right, wrong, refused = (int(g) for g in summary.groups())
    assert frames >= 4 and wrong == 0 and right + refused == frames
    assert "WRONG" not in out.stdout
