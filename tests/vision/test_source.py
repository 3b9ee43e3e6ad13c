"""The camera source: a video, a folder of frames or a camera, read like a shoe.

Issue (camera fallback): frames from cv2.VideoCapture (device index, video
file, RTSP or HTTP URL) or a folder of images in name order; open(),
poll(timeout) -> reads, close(); clear errors for a missing device or file.
Each physical card dealt is one read, in order.
"""

from __future__ import annotations

import time

import pytest

from vision_lab import synth
from shoed.vision.source import CameraError, CameraSource, WatchConfig


def test_a_dealing_video_gives_each_card_once_in_order(deal_video, recognizer):
    path, info = deal_video
    source = CameraSource(path, WatchConfig(roi=tuple(info["roi"])), recognizer)
    source.open()
    try:
        reads = list(source.reads(timeout=1.0))
    finally:
        source.close()
    assert [r.card for r in reads] == info["cards"]
    assert all(r.confidence >= 0.9 for r in reads)
    indices = [r.frame_index for r in reads]
    assert indices == sorted(indices)
    stamps = [r.mono_ns for r in reads]
    assert stamps == sorted(stamps)
    assert source.finished and source.frame_index + 1 == info["frames"]


def test_a_folder_of_frames_is_read_in_name_order(tmp_path, recognizer):
    info = synth.write_deal_folder(str(tmp_path), ["3H", "KC"], seed=5, size=(640, 360), roi=(200, 60, 240, 240))
    with CameraSource(str(tmp_path), WatchConfig(roi=(200, 60, 240, 240)), recognizer) as source:
        reads = list(source.reads())
    assert [r.card for r in reads] == info["cards"]


def test_poll_answers_within_its_timeout(deal_video, recognizer):
    path, info = deal_video
    with CameraSource(path, WatchConfig(roi=tuple(info["roi"])), recognizer, realtime=True) as source:
        start = time.monotonic()
        reads = source.poll(0.2)  # paced at 30 fps: the first card is further in than 0.2 s
        took = time.monotonic() - start
    assert reads == [] and took < 0.2 + 0.3


@pytest.mark.parametrize(
    "url, message",
    [
        ("/nonexistent/deal.avi", "no such camera, video or folder"),
        ("99", "no camera at device index 99"),
    ],
)
def test_missing_sources_are_clear_errors(url, message, recognizer):
    with pytest.raises(CameraError, match=message):
        CameraSource(url, recognizer=recognizer).open()


def test_an_empty_folder_is_a_clear_error(tmp_path, recognizer):
    (tmp_path / "notes.txt").write_text("no pictures here")
    with pytest.raises(CameraError, match="no images in folder"):
        CameraSource(str(tmp_path), recognizer=recognizer).open()


def test_a_file_that_is_no_video_is_a_clear_error(tmp_path, recognizer):
    bogus = tmp_path / "deal.avi"
    bogus.write_bytes(b"this is not a video\n" * 50)
    with pytest.raises(CameraError, match="cannot open video"):
        CameraSource(str(bogus), recognizer=recognizer).open()


def test_poll_before_open_is_a_clear_error(recognizer):
    with pytest.raises(CameraError, match="open"):
        CameraSource("0", recognizer=recognizer).poll(0.1)


def test_close_twice_is_harmless(deal_video, recognizer):
    source = CameraSource(deal_video[0], recognizer=recognizer)
    source.open()
    source.close()
    source.close()
    assert not source.connected
