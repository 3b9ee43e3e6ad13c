"""The training lab (vision_lab) stays outside the runtime: the camera fallback
loads and reads cards without it (issue: the vision lab outside the runtime package)."""

from __future__ import annotations

import pathlib
import subprocess
import sys

ROOT = pathlib.Path(__file__).resolve().parents[2]


def test_runtime_vision_does_not_import_the_lab():
    code = (
        "import sys, numpy as np\n"
        "import shoed.vision.recognize, shoed.vision.source, shoed.vision.watch, shoed.commands.vision\n"
        "from shoed.vision import identify\n"
        "identify(np.full((120, 160, 3), 90, np.uint8))\n"
        "print(sorted(m for m in sys.modules if m.split('.')[0] == 'vision_lab'))\n"
    )
    out = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "[]", out.stdout


def test_no_runtime_module_names_the_lab():
    offenders = [str(p.relative_to(ROOT)) for p in (ROOT / "shoed").rglob("*.py")
                 if "import vision_lab" in p.read_text() or "from vision_lab" in p.read_text()]
    assert offenders == []
