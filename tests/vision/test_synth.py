"""The generator of labelled test pictures and dealing videos.

Issue (camera fallback): synthetic labelled images at phone resolutions with
perspective, rotation, blur, noise, glare and partial occlusion, a manifest of
labels, and dealing videos written with cv2.VideoWriter (MJPG .avi).
"""

from __future__ import annotations

import json
import os
import subprocess
import sys

import cv2
import numpy as np
import pytest

from vision_lab import synth

TOOL = os.path.join(os.path.dirname(__file__), "..", "..", "tools", "make_card_images.py")


def test_same_seed_same_picture():
    a = synth.photograph("7C", np.random.default_rng(4), size=(640, 480))
    b = synth.photograph("7C", np.random.default_rng(4), size=(640, 480))
    assert np.array_equal(a.image, b.image) and a.corners == b.corners


@pytest.mark.parametrize("kind, card", [("card", "QH"), ("hidden", None), ("back", None), ("blank", None),
                                        ("empty", None)])
def test_labels_say_what_can_be_read(kind, card):
    shot = synth.photograph("QH", np.random.default_rng(1), kind=kind, size=(640, 480))
    assert shot.card == card and shot.kind == kind
    assert shot.image.shape == (480, 640, 3)
    if kind != "empty":
        pts = np.array(shot.corners)
        assert (pts >= 0).all() and (pts[:, 0] <= 640).all() and (pts[:, 1] <= 480).all()


def test_every_card_can_be_drawn():
    rng = np.random.default_rng(0)
    for style in (synth.classic_style(), synth.held_out_style()):
        for label in synth.all_labels():
            face = synth.draw_face(label, rng, style)
            assert face.image.shape == (synth.FACE_H, synth.FACE_W, 3)
            assert len(face.index_boxes) in (2, 4)


def test_photo_set_with_manifest(tmp_path):
    manifest = synth.write_set(str(tmp_path), 3, seed=2, kinds=("card", "empty"), size=(640, 480))
    on_disk = json.loads((tmp_path / "manifest.json").read_text())
    assert on_disk == manifest
    assert [m["kind"] for m in manifest] == ["card", "empty", "card"]
    for m in manifest:
        assert cv2.imread(str(tmp_path / m["file"])) is not None


def test_dealing_video_and_its_labels(tmp_path):
    path = str(tmp_path / "deal.avi")
    info = synth.write_deal_video(path, ["AS", "TD"], seed=3, size=(640, 360), roi=(200, 60, 240, 240))
    cap = cv2.VideoCapture(path)
    frames = 0
    while cap.read()[0]:
        frames += 1
    cap.release()
    assert frames == info["frames"] > 0
    assert json.loads(open(path + ".json").read())["cards"] == ["AS", "TD"]


def test_the_tool_writes_photos_and_videos(tmp_path):
    out = subprocess.run([sys.executable, TOOL, "photos", str(tmp_path / "p"), "--count", "2", "--size", "640x480"],
                         capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, out.stderr
    assert len(json.loads((tmp_path / "p" / "manifest.json").read_text())) == 2
    out = subprocess.run([sys.executable, TOOL, "video", str(tmp_path / "d.avi"), "--cards", "9h,10s",
                          "--size", "640x360", "--roi", "200,60,240,240"], capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, out.stderr
    assert json.loads((tmp_path / "d.avi.json").read_text())["cards"] == ["9H", "TS"]
    bad = subprocess.run([sys.executable, TOOL, "video", str(tmp_path / "e.avi"), "--cards", "1H"],
                         capture_output=True, text=True, timeout=120)
    assert bad.returncode == 2 and "unknown card" in bad.stderr
