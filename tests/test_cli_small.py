"""Small command-line promises: one line and a non-zero exit for what cannot be done."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from harness.processes import run_shoed


def test_vision_identify_without_opencv_is_one_line(tmp_path):
    blocked = tmp_path / "blocked" / "cv2"
    blocked.mkdir(parents=True)
    (blocked / "__init__.py").write_text("raise ImportError('No module named cv2')\n")
    image = tmp_path / "card.png"
    image.write_bytes(b"\x89PNG\r\n")
    root = Path(__file__).resolve().parent.parent
    env = dict(os.environ, PYTHONPATH=f"{tmp_path / 'blocked'}{os.pathsep}{root}")
    for args in (("identify", str(image)), ("watch", str(tmp_path))):
        proc = subprocess.run([sys.executable, "-m", "shoed", "vision", *args], capture_output=True, text=True,
                              env=env, timeout=60)
        assert proc.returncode == 2, proc.stderr
        assert proc.stderr.count("\n") == 1 and "OpenCV" in proc.stderr and "Traceback" not in proc.stderr


def test_report_out_refuses_what_is_not_png(tmp_path):
    proc = run_shoed("report", str(tmp_path), "--out", str(tmp_path / "board.jpg"))
    assert proc.returncode == 2 and proc.stderr.count("\n") == 1 and ".png" in proc.stderr
    assert not (tmp_path / "board.jpg").exists()


@pytest.mark.parametrize(
    "parse, text, says",
    [
        ("rate", "1.5", "a rate lies between 0 and 1, not 1.5"),
        ("rate", "x", "'x' is not a number"),
        ("seconds", "-1", "a number of seconds is 0 or more, at most 86400, not -1"),
        ("seconds", "inf", "a number of seconds is 0 or more, at most 86400, not inf"),
        ("wait", "0", "a number of seconds above 0, at most 86400, not 0"),
        ("wait", "nan", "a number of seconds above 0, at most 86400, not nan"),
        ("wait", "1e300", "a number of seconds above 0, at most 86400, not 1e300"),
        ("duration", "-inf", "a number of seconds above 0, at most 31622400 (a year), not -inf"),
        ("positive_int", "0", "expected a whole number of at least 1, not 0"),
        ("count", "2.5", "'2.5' is not a whole number"),
        ("count", "-1", "expected a whole number of 0 or more, not -1"),
    ],
)
def test_shared_argument_types_refuse_with_one_line(parse, text, says):
    import argparse

    from shoed import cli

    with pytest.raises(argparse.ArgumentTypeError) as refused:
        getattr(cli, parse)(text)
    assert str(refused.value) == says


def test_shared_argument_types_take_what_fits():
    from shoed import cli

    assert (cli.rate("0.25"), cli.seconds("0"), cli.positive_int("3"), cli.count("0")) == (0.25, 0.0, 3, 0)
    assert (cli.wait("0.5"), cli.duration("604800")) == (0.5, 604800.0)


def test_the_longest_time_an_option_takes_is_the_configurations():
    from shoed import cli
    from shoed.daemon.config import MAX_SECONDS

    assert cli.MAX_SECONDS == MAX_SECONDS


@pytest.mark.parametrize("argv", [
    ("command", "status", "--timeout", "-1"),  # a poll without end: the command hung
    ("command", "status", "--timeout", "nan"),  # a traceback
    ("watch", "--once", "--timeout", "inf"),
    ("witness", "--db", "sqlite:///unused.db", "t1=tcp://127.0.0.1:5999", "--duration", "-1"),
    ("vision", "watch", "unused", "--seconds", "nan"),
])
def test_a_time_out_of_bounds_is_one_line_and_exit_2_before_anything_runs(tmp_path, argv):
    proc = subprocess.run([sys.executable, "-m", "shoed", *argv], cwd=tmp_path, capture_output=True, text=True,
                          timeout=20)
    assert proc.returncode == 2, proc.stdout + proc.stderr
    lines = proc.stderr.strip().splitlines()
    assert "a number of seconds" in lines[-1] and "Traceback" not in proc.stderr, proc.stderr
    assert not list(tmp_path.iterdir()), "nothing was made"


def test_journal_recall_refuses_a_last_of_zero(tmp_path):
    proc = run_shoed("journal", "recall", str(tmp_path), "--last", "0")
    assert proc.returncode == 2 and "expected a whole number of at least 1, not 0" in proc.stderr
