"""Small command-line promises: one line and a non-zero exit for what cannot be done."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

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
