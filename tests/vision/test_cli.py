"""`shoed vision identify` and `shoed vision watch` at the command line.

`identify --json` prints a JSON list of {"file", "card", "confidence"}, with
"reason" when "card" is null: a stable contract used by outside tests (issue:
camera fallback). A missing or unreadable file is a reason, not a failure:
the exit status stays 0.
"""

from __future__ import annotations

import dataclasses
import json
import os
import pathlib
import subprocess
import sys

import cv2
import numpy as np
import pytest

from vision_lab import synth
from tests.vision.framing import framed_tightly, on_grey_cloth
from vision_lab.hard_sets import side_by_side


@pytest.fixture(scope="module")
def photos(tmp_path_factory, classic_shots, hard_shots):
    folder = tmp_path_factory.mktemp("photos")
    paths = {}
    for name, shot in (("card.jpg", classic_shots[3]), ("table.jpg", hard_shots[0])):
        cv2.imwrite(str(folder / name), shot.image)
        paths[name] = str(folder / name)
    (folder / "notes.txt").write_text("not a picture")
    paths["notes.txt"] = str(folder / "notes.txt")
    paths["missing.jpg"] = str(folder / "missing.jpg")
    paths["card"] = classic_shots[3].card
    return paths


def test_identify_json_contract(shoed_cli, photos):
    files = [photos["card.jpg"], photos["table.jpg"], photos["missing.jpg"], photos["notes.txt"]]
    proc = shoed_cli("vision", "identify", *files, "--json", timeout=120)
    assert proc.returncode == 0, proc.stderr
    out = json.loads(proc.stdout)
    assert [e["file"] for e in out] == files
    card, table, missing, notes = out
    assert card == {"file": files[0], "card": photos["card"], "confidence": card["confidence"]}
    assert 0.9 <= card["confidence"] <= 1.0
    for entry, reason in ((table, "no card found"), (missing, "no such file"), (notes, "cannot read file")):
        assert entry["card"] is None
        # `detail`, where there is more to say: the file that is no picture is told the formats read
        assert set(entry) == {"file", "card", "confidence", "reason"} | ({"detail"} if entry is notes else set())
        assert entry["reason"].startswith(reason)


def test_identify_text(shoed_cli, photos):
    proc = shoed_cli("vision", "identify", photos["card.jpg"], photos["missing.jpg"], timeout=120)
    assert proc.returncode == 0
    lines = proc.stdout.splitlines()
    assert lines[0].startswith(f"{photos['card.jpg']}: {photos['card']} (")
    assert lines[1] == f"{photos['missing.jpg']}: unreadable: no such file"


def test_a_phone_s_heic_picture_is_named_with_what_to_do(shoed_cli, tmp_path):
    """OpenCV reads no HEIF picture, the format phones save their photographs in: the file is
    refused as any file that is no image, and `detail` (and the text line) says what it is and what
    to do. Another file that is no image is told the formats that are read."""
    heic = tmp_path / "IMG_0042.HEIC"
    heic.write_bytes(b"\x00\x00\x00\x18ftypheic\x00\x00\x00\x00mif1heic" + bytes(200))
    mp4 = tmp_path / "clip.mp4"
    mp4.write_bytes(b"\x00\x00\x00\x18ftypisom\x00\x00\x02\x00isomiso2" + bytes(200))
    out = json.loads(shoed_cli("vision", "identify", str(heic), str(mp4), "--json", timeout=120).stdout)
    assert out[0]["reason"] == out[1]["reason"] == "cannot read file as an image"
    assert "HEIC" in out[0]["detail"] and "JPEG" in out[0]["detail"] and "HEIC" not in out[1]["detail"]
    assert out[1]["detail"] == "not a picture in a format shoed reads: JPEG, PNG, BMP, TIFF, WebP, GIF or PNM"
    line = shoed_cli("vision", "identify", str(heic), timeout=120).stdout.strip()
    assert line == f"{heic}: unreadable: cannot read file as an image ({out[0]['detail']})"


def test_identify_needs_an_image(shoed_cli):
    assert shoed_cli("vision", "identify").returncode == 2


def test_bad_threshold_is_one_line(shoed_cli, photos):
    proc = shoed_cli("vision", "identify", photos["card.jpg"], "--threshold", "1.5")
    assert proc.returncode == 2 and proc.stderr.strip() == "shoed: --threshold must be in (0, 1], not 1.5"


def test_watch_prints_one_line_per_card(shoed_cli, deal_video):
    path, info = deal_video
    roi = ",".join(str(v) for v in info["roi"])
    proc = shoed_cli("vision", "watch", path, "--roi", roi, "--json", timeout=180)
    assert proc.returncode == 0, proc.stderr
    reads = [json.loads(line) for line in proc.stdout.splitlines()]
    assert [r["card"] for r in reads] == info["cards"]
    assert all({"card", "confidence", "frame_index", "mono_ns"} <= set(r) for r in reads)


def test_watch_reads_a_colour_camera_s_black_card_on_grey_cloth_when_told(shoed_cli, tmp_path):
    """A folder of a colour camera's frames: grey cloth, then a black card filling the view. With no
    colour in view the card is reported unreadable (`no_colour`), and one line on stderr names
    `--colour-camera`; with it, the card is read."""
    for i, (frame, _) in enumerate(framed_tightly("TS", (70, 70, 70))):
        cv2.imwrite(str(tmp_path / f"frame_{i:03d}.png"), frame)
    for extra, card, reason in (([], None, "no_colour"), (["--colour-camera"], "TS", None)):
        proc = shoed_cli("vision", "watch", str(tmp_path), "--json", *extra, timeout=120)
        assert proc.returncode == 0, proc.stderr
        reads = [json.loads(line) for line in proc.stdout.splitlines()]
        assert [(r["card"], r.get("reason")) for r in reads] == [(card, reason)], reads
        # the refusal names the option at once, on stderr
        assert ("--colour-camera" in proc.stderr) == (card is None), proc.stderr


@pytest.mark.parametrize(
    "args, message",
    [
        (["/nonexistent.avi"], "shoed: no such camera, video or folder: /nonexistent.avi"),
        (["0", "--roi", "1,2,3"], "shoed: bad --roi '1,2,3': write X,Y,W,H in pixels, e.g. 400,120,480,480"),
    ],
)
def test_watch_errors_are_one_line(shoed_cli, args, message):
    proc = shoed_cli("vision", "watch", *args)
    assert proc.returncode == 2
    assert proc.stderr.strip() == message


def test_opencv_loads_only_when_vision_runs():
    """The daemon of a serial shoe never pays for OpenCV: building the command
    line and importing shoed.vision load neither cv2 nor the model."""
    code = ("import sys, shoed.cli, shoed.vision; shoed.cli.build_parser(); "
            "print('cv2' in sys.modules, 'shoed.vision.model' in sys.modules)")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60)
    assert out.stdout.split() == ["False", "False"], out.stderr


def test_identify_json_names_a_court_card_with_a_rank_alone(shoed_cli, tmp_path):
    """A court card of a design with no suit under its rank: `no_suit_in_index`,
    with a `detail` for people (docs/vision.md, the reason table)."""
    style = dataclasses.replace(synth.classic_style(), index_layout="rank-alone")
    face = synth.draw_face("KH", np.random.default_rng(11), style)
    shot = synth.photograph("KH", np.random.default_rng(11), style, size=(1280, 960), occlusion_p=0.0,
                            tilt=0.1, blur=0.8, face=face)
    path = str(tmp_path / "king.jpg")
    cv2.imwrite(path, shot.image)
    proc = shoed_cli("vision", "identify", path, "--json", timeout=120)
    assert proc.returncode == 0, proc.stderr
    (entry,) = json.loads(proc.stdout)
    assert entry["card"] is None and entry["reason"] == "no_suit_in_index" and entry["detail"]


def test_identify_json_names_two_cards_in_view(shoed_cli, tmp_path):
    """Two different cards side by side: `several_cards`, the `detail` naming both (docs/vision.md)."""
    path = str(tmp_path / "two.jpg")
    cv2.imwrite(path, side_by_side(np.random.default_rng(5), ("9S", "AS")))
    proc = shoed_cli("vision", "identify", path, "--json", timeout=120)
    assert proc.returncode == 0, proc.stderr
    (entry,) = json.loads(proc.stdout)
    assert entry["card"] is None and entry["reason"] == "several_cards", entry
    assert entry["detail"] in ("9S and AS in view", "AS and 9S in view")


def test_identify_json_says_a_picture_has_no_colour(shoed_cli):
    """A monochrome camera's frame (an ace of hearts whose heart reads as a spade): `no_colour`,
    the `detail` saying why (docs/vision.md)."""
    path = str(pathlib.Path(__file__).parent / "data" / "grey" / "AH-monochrome-read-as-AS.png")
    proc = shoed_cli("vision", "identify", path, "--json", timeout=120)
    assert proc.returncode == 0, proc.stderr
    (entry,) = json.loads(proc.stdout)
    assert entry["card"] is None and entry["reason"] == "no_colour", entry
    assert "no colour" in entry["detail"]


def test_identify_says_a_mirrored_picture_is_mirrored(shoed_cli, tmp_path):
    """A held-out lettering's jack of spades photographed through a camera set to mirror its picture:
    `identify --json` refuses it as `mirrored`, its `detail` naming the rank both ways, and one line
    on stderr says to set the camera not to mirror (docs/vision.md, the reason table)."""
    from vision_lab import hard_sets

    shot = synth.photograph("JS", np.random.default_rng(0), hard_sets.held_out_styles()[0], size=(1280, 960),
                            occlusion_p=0.0)
    path = str(tmp_path / "mirrored.png")
    cv2.imwrite(path, cv2.flip(shot.image, 1))
    proc = shoed_cli("vision", "identify", path, "--json", timeout=120)
    assert proc.returncode == 0, proc.stderr
    (entry,) = json.loads(proc.stdout)
    assert (entry["card"], entry["reason"]) == (None, "mirrored"), entry
    assert "mirrored as a J" in entry["detail"], entry
    assert "1 picture(s) refused as mirrored" in proc.stderr and "not to mirror" in proc.stderr, proc.stderr


@pytest.fixture(scope="module")
def black_on_grey(tmp_path_factory):
    """Phone photographs of black cards on grey cloth: a colour camera's, with no colour in view."""
    folder = tmp_path_factory.mktemp("grey-cloth")
    for label, seed in (("9S", 2), ("KC", 3)):
        cv2.imwrite(str(folder / f"IMG_{label}.jpg"), on_grey_cloth(label, seed))
    return folder


def test_identify_reads_a_colour_camera_s_black_card_with_no_colour_in_view_when_told(shoed_cli, black_on_grey):
    """A black card on grey cloth shows no colour: alone, its picture is a monochrome camera's, and
    it is refused (`no_colour`), with one line on stderr naming --colour-camera. Told that a colour
    camera took it, `identify` reads it."""
    path = str(black_on_grey / "IMG_9S.jpg")
    proc = shoed_cli("vision", "identify", path, "--json", timeout=120)
    assert proc.returncode == 0, proc.stderr
    (entry,) = json.loads(proc.stdout)
    assert (entry["card"], entry["reason"]) == (None, "no_colour"), entry
    assert "1 picture(s) refused as no_colour" in proc.stderr and "--colour-camera" in proc.stderr
    proc = shoed_cli("vision", "identify", path, "--json", "--colour-camera", timeout=120)
    assert proc.returncode == 0, proc.stderr
    (entry,) = json.loads(proc.stdout)
    assert entry["card"] == "9S" and "reason" not in entry, entry
    assert "no_colour" not in proc.stderr


def test_score_counts_black_cards_with_no_colour_in_view_read_when_told(shoed_cli, black_on_grey):
    """`score` refuses them too, says so on stderr, and `--colour-camera` (recorded in its JSON as
    `colour_camera`) reads them."""
    proc = shoed_cli("vision", "score", str(black_on_grey), "--json", timeout=180)
    assert proc.returncode == 0, proc.stderr
    out = json.loads(proc.stdout)
    assert (out["right"], out["refused"], out["refusals"], out["colour_camera"]) == (0, 2, {"no_colour": 2}, False)
    assert "2 picture(s) refused as no_colour" in proc.stderr
    proc = shoed_cli("vision", "score", str(black_on_grey), "--json", "--colour-camera", timeout=180)
    assert proc.returncode == 0, proc.stderr
    out = json.loads(proc.stdout)
    assert (out["right"], out["refused"], out["colour_camera"]) == (2, 0, True)


def test_watch_stops_in_one_line_on_a_stream_gone_over_to_frames_too_large(deal_video, monkeypatch, capsys):
    """A stream that goes over to frames larger than are read is stopped at the first such frame,
    in one line (exit 2), as when it opens with them."""
    from shoed import cli
    from shoed.vision import picture

    path, info = deal_video
    sizes = []

    def fits(width: int, height: int) -> bool:  # the open's size and 30 frames, then larger ones
        sizes.append((width, height))
        return len(sizes) <= 31

    monkeypatch.setattr(picture, "fits", fits)
    assert cli.main(["vision", "watch", path, "--roi", ",".join(map(str, info["roi"]))]) == 2
    width, height = info["size"]
    err = capsys.readouterr().err
    assert err.startswith(f"shoed: frames of {width} x {height} pixels from {path}: at most 120 million are read")
    assert err.count("\n") == 1 and len(sizes) == 32


def test_watch_refuses_a_pipe_at_once_in_one_line(shoed_cli, tmp_path):
    """A pipe given as the camera is never opened (its open would wait for a writer for ever)."""
    fifo = tmp_path / "camera"
    os.mkfifo(fifo)
    proc = shoed_cli("vision", "watch", str(fifo), timeout=30)
    assert proc.returncode == 2
    assert proc.stderr == f"shoed: not a camera, video or folder but a pipe: {fifo}\n"
