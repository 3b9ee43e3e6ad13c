"""The camera driver's options: a region of interest that is not four whole numbers, or a
`colour_camera` that is not true or false, is refused with one line naming the form, before any
camera is opened. Frames that a region does not fit report the camera lost, and it reads on when
its frames fit again."""

from __future__ import annotations

import time

import numpy as np
import pytest

from shoed.drivers import DriverError, driver_class

pytest.importorskip("cv2", reason="the camera driver needs OpenCV (installed with the test extra)")


@pytest.mark.parametrize("roi", [[10, 20, 300], [10, 20, 300, 400, 5], ["a", 2, 3, 4], [1.5j, 2, 3, 4]])
def test_a_bad_roi_is_one_clear_error(tmp_path, roi):
    camera = driver_class("camera")(str(tmp_path / "no-such-video.avi"), roi=roi)
    with pytest.raises(DriverError) as caught:
        camera.open()
    message = str(caught.value)
    assert "roi is [x, y, width, height] in pixels" in message
    assert "\n" not in message


@pytest.mark.parametrize("value", ["yes", 1, None])
def test_colour_camera_is_true_or_false(tmp_path, value):
    camera = driver_class("camera")(str(tmp_path / "no-such-video.avi"), colour_camera=value)
    with pytest.raises(DriverError) as caught:
        camera.open()
    assert "colour_camera is true or false" in str(caught.value) and "\n" not in str(caught.value)


def test_frames_the_region_does_not_fit_lose_the_camera_until_they_fit_again(tmp_path):
    """A camera's first frames are smaller than its region of interest (it came up at another
    resolution): the camera is reported lost, with the reason on one line, and tried again; when its
    frames fit, it is restored and the card dealt under it is read."""
    import cv2

    from vision_lab import synth

    roi = (300, 60, 400, 400)
    frames = [np.full((240, 320, 3), 60, np.uint8)] * 2
    frames += [f for f, _ in synth.deal_frames(["9S"], np.random.default_rng(2), size=(960, 540), roi=roi)]
    for i, frame in enumerate(frames):
        cv2.imwrite(str(tmp_path / f"frame_{i:03d}.png"), frame)
    camera = driver_class("camera")(str(tmp_path), roi=list(roi), realtime=False)
    camera.open()
    readings = []
    try:
        end = time.monotonic() + 60
        while time.monotonic() < end and not any(r.kind == "card" for r in readings):
            readings += camera.poll(0.2)
    finally:
        camera.close()
    links = [(r.link, r.text) for r in readings if r.kind == "link"]
    assert [link for link, _ in links] == ["connected", "lost", "restored"], links
    assert "does not fit" in links[1][1] and "\n" not in links[1][1]
    assert [r.card for r in readings if r.kind == "card"] == ["9S"]
