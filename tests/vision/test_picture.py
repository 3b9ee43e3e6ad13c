"""Pictures from files (`shoed.vision.picture`): the size read from the header of every format
shoed reads, before a pixel is decoded, and a picture too large to decode refused with its size.

The pictures are real files written by OpenCV's own encoders; the hostile ones are headers that
claim more pixels than their data holds, as a decompression bomb does."""

from __future__ import annotations

import io
import os
import struct
import subprocess
import sys
import zlib

import cv2
import numpy as np
import pytest

from shoed.vision import picture
from vision_lab import synth
from shoed.vision.source import CameraError, CameraSource
from shoed.vision.watch import WatchConfig


def _png_bomb(path: str, width: int, height: int) -> None:
    """A PNG of one-bit rows, all zero: a few kilobytes that decode to width x height pixels."""
    rows = (b"\x00" + bytes((width + 7) // 8)) * height

    def chunk(kind: bytes, data: bytes) -> bytes:
        return struct.pack(">I", len(data)) + kind + data + struct.pack(">I", zlib.crc32(kind + data))

    ihdr = struct.pack(">IIBBBBB", width, height, 1, 0, 0, 0, 0)
    with open(path, "wb") as f:
        f.write(b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", ihdr) + chunk(b"IDAT", zlib.compress(rows, 9)) + chunk(b"IEND", b""))


@pytest.fixture(scope="module")
def face() -> np.ndarray:
    rng = np.random.default_rng(3)
    return rng.integers(0, 255, size=(37, 53, 3), dtype=np.uint8)  # width and height that differ


@pytest.mark.parametrize(("suffix", "kind"), [(".png", "PNG"), (".jpg", "JPEG"), (".bmp", "BMP"), (".tif", "TIFF"),
                                              (".webp", "WebP"), (".ppm", "PNM"), (".pgm", "PNM"), (".gif", "GIF")])
def test_every_format_read_has_its_size_from_its_header(tmp_path, face, suffix, kind):
    path = str(tmp_path / f"face{suffix}")
    image = cv2.cvtColor(face, cv2.COLOR_BGR2GRAY) if suffix == ".pgm" else face
    if not cv2.imwrite(path, image):
        pytest.skip(f"this OpenCV writes no {suffix} file")  # GIF: an encoder OpenCV builds only lately
    with open(path, "rb") as f:
        assert picture.size(f) == (kind, 53, 37)
    assert picture.read(path).shape == (37, 53, 3)


def test_a_lossless_webp_is_sized_from_its_header_and_read_exactly(tmp_path, face):
    lossless = str(tmp_path / "face.webp")
    assert cv2.imwrite(lossless, face, [cv2.IMWRITE_WEBP_QUALITY, 101])  # above 100: VP8L
    with open(lossless, "rb") as f:
        assert f.read(16)[12:16] == b"VP8L"
        f.seek(0)
        assert picture.size(f) == ("WebP", 53, 37)
    assert np.array_equal(picture.read(lossless), face)


def test_a_jpeg_s_size_is_found_behind_its_exif_and_other_segments(tmp_path, face):
    """A phone's JPEG carries its EXIF (with a thumbnail), its colour profile and more before the
    frame: each is skipped by its length, however large."""
    ok, data = cv2.imencode(".jpg", face)
    assert ok
    data = data.tobytes()
    exif = b"\xff\xe1" + struct.pack(">H", 60_002) + b"Exif\x00\x00" + bytes(59_994)
    comment = b"\xff\xfe" + struct.pack(">H", 10) + b"a dealer"
    path = tmp_path / "phone.jpg"
    path.write_bytes(data[:2] + exif + b"\xff\xff" + comment + data[2:])  # a fill byte before a marker too
    with open(path, "rb") as f:
        assert picture.size(f) == ("JPEG", 53, 37)
    assert picture.read(str(path)).shape == (37, 53, 3)


def test_a_bmp_stored_top_down_and_a_big_endian_tiff_are_sized_right():
    bmp = b"BM" + bytes(12) + struct.pack("<Iii", 40, 640, -480) + bytes(6)
    assert picture.size(io.BytesIO(bmp)) == ("BMP", 640, 480)
    ifd = struct.pack(">H", 2) + struct.pack(">HHI4s", 256, 3, 1, struct.pack(">H", 1280) + b"\x00\x00") \
        + struct.pack(">HHI4s", 257, 4, 1, struct.pack(">I", 960))
    tiff = b"MM\x00*" + struct.pack(">I", 8) + ifd
    assert picture.size(io.BytesIO(tiff)) == ("TIFF", 1280, 960)


@pytest.mark.parametrize("data", [
    b"",
    b"\x89PNG\r\n\x1a\n\x00\x00",  # a PNG cut short
    b"\xff\xd8\xff\xe0\x00",  # a JPEG cut inside its first segment's length
    b"\xff\xd8\xff\xe0\x00\x10JFIF",  # a JPEG that ends before its frame
    b"\xff\xd8\x00\x00\x00\x00",  # a JPEG whose segments do not chain
    b"\xff\xd8\xff\xda\x00\x08" + bytes(8),  # a scan before any frame
    b"II*\x00" + struct.pack("<I", 8) + struct.pack("<H", 1) + struct.pack("<HHI4s", 256, 4, 1, bytes(4)),  # no height
    b"RIFF\x00\x00\x00\x00WEBPVP8Z" + bytes(16),  # a WebP chunk of no known kind
    b"P6\n# a comment that goes on" + b" and on" * 60 + b"\n3 2\n255\n",  # a PNM header past what is read
    b"not a picture at all",
])
def test_a_header_cut_short_or_in_no_known_format_has_no_size(data):
    assert picture.size(io.BytesIO(data)) is None


@pytest.mark.parametrize(("name", "reason", "detail"), [
    ("notes.txt", picture.UNREADABLE, "not a picture in a format shoed reads: JPEG, PNG, BMP, TIFF, WebP, GIF or PNM"),
    ("cut.jpg", picture.UNREADABLE, "a JPEG file OpenCV cannot decode"),
    ("zero.png", picture.UNREADABLE, "a PNG file whose header gives no size"),
])
def test_what_is_not_read_says_why_in_one_line(tmp_path, face, name, reason, detail):
    path = tmp_path / name
    if name == "notes.txt":
        path.write_text("the shoe's serial number: 1024")
    elif name == "cut.jpg":
        ok, data = cv2.imencode(".jpg", face)
        path.write_bytes(data.tobytes()[:300])  # the header whole, the picture cut off
    else:
        ok, data = cv2.imencode(".png", face)
        path.write_bytes(data.tobytes()[:16] + struct.pack(">II", 0, 37) + data.tobytes()[24:])
    with pytest.raises(picture.PictureError) as caught:
        picture.read(str(path))
    assert (caught.value.reason, caught.value.detail) == (reason, detail)
    assert "\n" not in str(caught.value)


@pytest.mark.timeout(20)
def test_a_pipe_or_a_device_is_refused_at_once_and_never_waited_on(tmp_path):
    """A pipe opened for reading waits for a writer, and a device such as /dev/zero never ends:
    either, given as a picture, is refused in one line without a byte read."""
    pipe = tmp_path / "frame.jpg"
    os.mkfifo(pipe)
    for path, what in ((str(pipe), "a pipe"), ("/dev/zero", "a device")):
        with pytest.raises(picture.PictureError) as caught:
            picture.read(path)
        assert (caught.value.reason, caught.value.detail) == (picture.UNREADABLE,
                                                              f"not a file but {what}: give a picture file")


def test_a_decompression_bomb_is_refused_before_it_is_decoded(tmp_path):
    """A PNG of a few kilobytes that says 20,000 x 20,000 pixels would take 1.2 GB to decode: it is
    refused with its size, and the process that read it stays small (the peak memory of a fresh
    interpreter, which a decode would have taken past a gigabyte)."""
    bomb = str(tmp_path / "bomb.png")
    _png_bomb(bomb, 20_000, 20_000)
    assert os.path.getsize(bomb) < 100_000
    # the peak of this process's own memory (VmHWM: a fresh count after exec, where ru_maxrss keeps
    # the forking parent's)
    code = ("import sys\nfrom shoed.vision import picture\n"
            "try:\n    picture.read(sys.argv[1])\nexcept picture.PictureError as exc:\n    print(exc)\n"
            "status = open('/proc/self/status').read().split('VmHWM:')[1]\n"
            "print(int(status.split()[0]) // 1024)\n")
    out = subprocess.run([sys.executable, "-c", code, bomb], capture_output=True, text=True, timeout=120, check=True)
    said, peak_mb = out.stdout.splitlines()
    assert said == "picture too large (a PNG of 20000 x 20000 pixels, at most 120 million read: shrink it)"
    assert int(peak_mb) < 400, f"{peak_mb} MB at the peak"


def test_a_picture_just_within_the_limit_is_read_and_one_just_over_it_is_not(tmp_path, monkeypatch):
    path = str(tmp_path / "wide.png")
    assert cv2.imwrite(path, np.full((10, 30, 3), 200, np.uint8))
    monkeypatch.setattr(picture, "MAX_PIXELS", 300)
    assert picture.read(path).shape == (10, 30, 3)
    monkeypatch.setattr(picture, "MAX_PIXELS", 299)
    with pytest.raises(picture.PictureError, match="^picture too large"):
        picture.read(path)


@pytest.mark.timeout(60)
def test_a_folder_of_frames_passes_over_a_bomb_and_a_pipe_and_reads_the_cards_after_them(tmp_path, recognizer):
    info = synth.write_deal_folder(str(tmp_path), ["3H", "KC"], seed=5, size=(640, 360), roi=(200, 60, 240, 240))
    _png_bomb(str(tmp_path / "00000.png"), 20_000, 20_000)  # first in name order
    os.mkfifo(tmp_path / "00000a.jpg")  # a pipe: never waited on
    with CameraSource(str(tmp_path), WatchConfig(roi=(200, 60, 240, 240)), recognizer) as source:
        reads = list(source.reads())
    assert [r.card for r in reads] == info["cards"]


def test_a_video_or_stream_of_frames_too_large_is_refused_at_open_and_mid_stream(deal_video, recognizer, monkeypatch):
    """A video file or a network stream says its frames' size as a picture file does: frames of more
    pixels than a picture may have are refused in one line when it opens, and a stream that goes
    over to such frames is stopped at the first (the camera driver reports the camera lost with the
    line, and tries again with back-off)."""
    path, info = deal_video
    width, height = info["size"]
    monkeypatch.setattr(picture, "MAX_PIXELS", width * height - 1)
    source = CameraSource(path, WatchConfig(roi=tuple(info["roi"])), recognizer)
    with pytest.raises(CameraError, match=rf"^frames of {width} x {height} pixels from {path}: at most 0 million"):
        source.open()
    assert not source.connected
    monkeypatch.setattr(picture, "MAX_PIXELS", width * height)
    with CameraSource(path, WatchConfig(roi=tuple(info["roi"])), recognizer) as source:
        assert all(read.card == info["cards"][0] for read in source.poll(0.05))  # the first card at most
        monkeypatch.setattr(picture, "MAX_PIXELS", width * height - 1)
        with pytest.raises(CameraError, match=rf"^frames of {width} x {height} pixels"):
            source.poll(0.05)
