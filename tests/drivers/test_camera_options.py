"""The camera driver's options: a region of interest that is not four whole numbers, or a
`colour_camera` that is not true or false, is refused with one line naming the form, before any
camera is opened."""

from __future__ import annotations

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
