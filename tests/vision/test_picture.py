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


def data_of(suffix: str, image: np.ndarray) -> bytes:
    ok, data = cv2.imencode(suffix, image)
    assert ok
    return data.tobytes()


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
    ("cut.jpg", picture.UNREADABLE,
     "the file is cut short: a JPEG file without its end (the end-of-image marker after its scan)"),
    ("garbled.png", picture.UNREADABLE, "a PNG file OpenCV cannot decode"),
    ("zero.png", picture.UNREADABLE, "a PNG file whose header gives no size"),
])
def test_what_is_not_read_says_why_in_one_line(tmp_path, face, name, reason, detail):
    path = tmp_path / name
    if name == "notes.txt":
        path.write_text("the shoe's serial number: 1024")
    elif name == "cut.jpg":
        ok, data = cv2.imencode(".jpg", face)
        path.write_bytes(data.tobytes()[:300])  # the header whole, the picture cut off
    elif name == "garbled.png":
        whole = data_of(".png", face)
        start = whole.index(b"IDAT") + 4
        path.write_bytes(whole[:start] + bytes(len(whole) - start - 12) + whole[-12:])  # its data gone, IEND kept
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


@pytest.fixture(scope="module")
def card_shot():
    return next(synth.shots(1, 41, sizes=((640, 480),)))


@pytest.mark.parametrize("suffix", [".jpg", ".png"])
@pytest.mark.parametrize("share", [0.6, 0.8, 0.9, 0.97, 0.999])
def test_a_jpeg_or_png_cut_short_is_refused_never_read_as_a_card(tmp_path, card_shot, suffix, share):
    """A decoder fills what is missing of a picture cut short with grey and decodes the rest, which
    can read as a card: a JPEG without its end marker, a PNG without its IEND chunk, is refused."""
    whole = data_of(suffix, card_shot.image)
    path = tmp_path / f"cut{suffix}"
    path.write_bytes(whole[: int(len(whole) * share)])
    with pytest.raises(picture.PictureError) as caught:
        picture.read(str(path))
    assert caught.value.reason == picture.UNREADABLE and caught.value.detail.startswith("the file is cut short: a ")
    path.write_bytes(whole)
    assert picture.read(str(path)).shape == card_shot.image.shape


def test_a_jpeg_whose_end_marker_is_followed_by_padding_or_a_trailer_is_read_and_a_thumbnail_s_is_no_end(tmp_path,
                                                                                                        card_shot):
    """A JPEG's end is its end marker after its scan: padding after it, or a phone's trailer (its
    own metadata, a motion photo's video), does not cut it short; the end marker of a thumbnail in
    its EXIF segment, before the scan, is not the picture's."""
    whole = data_of(".jpg", card_shot.image)
    path = tmp_path / "card.jpg"
    for tail in (bytes(512), b"\xff" * 64, b"SEFH\x00\x00 a phone's own trailer SEFT"):
        path.write_bytes(whole + tail)
        assert picture.read(str(path)).shape == card_shot.image.shape
    thumbnail = data_of(".jpg", card_shot.image[::16, ::16])
    exif = b"Exif\x00\x00" + thumbnail
    with_exif = whole[:2] + b"\xff\xe1" + struct.pack(">H", len(exif) + 2) + exif + whole[2:]
    path.write_bytes(with_exif[: len(with_exif) * 3 // 4])
    with pytest.raises(picture.PictureError, match="cut short"):
        picture.read(str(path))


def _tiff(entries: list[tuple[int, int, int, int]], strip: bytes) -> bytes:
    """A little-endian TIFF of one strip: `entries` (tag, type, count, value), tag 273 pointing at the strip."""
    data_at = 8 + 2 + 12 * len(entries) + 4
    out = bytearray(b"II*\x00" + struct.pack("<I", 8) + struct.pack("<H", len(entries)))
    for tag, kind, n, value in entries:
        value = data_at if tag == 273 else value
        out += struct.pack("<HHI", tag, kind, n) + (struct.pack("<HH", value, 0) if kind == 3 else struct.pack("<I", value))
    return bytes(out + struct.pack("<I", 0) + strip)


def _grey_tiff(width: int, height: int, *size_entries: tuple[int, int, int, int]) -> bytes:
    strip = zlib.compress(b"\x80" * (width * height), 9)
    rest = [(258, 3, 1, 8), (259, 3, 1, 8), (262, 3, 1, 1), (273, 4, 1, 0), (277, 3, 1, 1), (278, 4, 1, height),
            (279, 4, 1, len(strip))]
    return _tiff([*size_entries, *rest], strip)


@pytest.mark.parametrize(("entries", "detail"), [
    # libtiff takes the first of two: 3000 x 3000 decoded where the second says 10 x 3000
    ([(256, 4, 1, 3000), (256, 4, 1, 10), (257, 4, 1, 3000)], "a TIFF file that gives its width twice"),
    ([(256, 4, 1, 3000), (257, 4, 1, 3000), (257, 3, 1, 10)], "a TIFF file that gives its height twice"),
    # LONG8 (BigTIFF's), RATIONAL: the four bytes read as the size would not be it
    ([(256, 16, 1, 3000), (257, 4, 1, 3000)], "a TIFF file that gives its width as other than one whole number"),
    ([(256, 4, 1, 3000), (257, 5, 1, 3000)], "a TIFF file that gives its height as other than one whole number"),
    ([(256, 4, 2, 3000), (257, 4, 1, 3000)], "a TIFF file that gives its width as other than one whole number"),
])
def test_a_tiff_that_gives_its_size_twice_or_in_another_type_is_refused(tmp_path, entries, detail):
    """The size read from the header must be the size decoded: a TIFF's width given twice (libtiff
    decodes by the first, a reader keeping the last would let a picture of any size past the limit)
    or as another type than one SHORT or LONG is refused in one line."""
    path = tmp_path / "twice.tif"
    path.write_bytes(_grey_tiff(3000, 3000, *entries))
    with pytest.raises(picture.PictureError) as caught:
        picture.read(str(path))
    assert caught.value.reason == picture.UNREADABLE and caught.value.detail.startswith(detail)
    assert "\n" not in str(caught.value)
    path.write_bytes(_grey_tiff(30, 20, (256, 3, 1, 30), (257, 4, 1, 20)))
    assert picture.read(str(path)).shape == (20, 30, 3)


def test_opencv_is_told_the_same_pixel_limit_and_keeps_its_log_lines_off_stderr(tmp_path):
    """In a fresh process, whatever imports OpenCV through shoed finds its pixel limit set to
    MAX_PIXELS (a second guard behind the header's) and its own log lines off: a TIFF whose
    directory OpenCV warns about is read, or refused, with nothing of OpenCV's on stderr."""
    import shoed.vision

    assert shoed.vision.OPENCV_ENVIRONMENT["OPENCV_IO_MAX_IMAGE_PIXELS"] == str(picture.MAX_PIXELS)
    warned = tmp_path / "unsorted.tif"  # tags not in ascending order: libtiff warns, then reads it
    warned.write_bytes(_tiff([(257, 4, 1, 2), (256, 4, 1, 2), (258, 3, 1, 8), (262, 3, 1, 1), (273, 4, 1, 0),
                              (277, 3, 1, 1), (278, 4, 1, 2), (279, 4, 1, 4)], b"\x80" * 4))
    code = ("import os, sys\nfrom shoed.vision import picture\n"
            "try:\n    print(picture.read(sys.argv[1]).shape)\nexcept picture.PictureError as exc:\n    print(exc)\n"
            "print(os.environ['OPENCV_IO_MAX_IMAGE_PIXELS'])\n")
    env = {k: v for k, v in os.environ.items() if not k.startswith("OPENCV_")}
    out = subprocess.run([sys.executable, "-c", code, str(warned)], capture_output=True, text=True, timeout=60,
                         env=env, check=True)
    assert out.stdout.splitlines() == ["(2, 2, 3)", str(picture.MAX_PIXELS)]
    assert out.stderr == ""


def test_a_picture_transparent_everywhere_is_refused_as_showing_nothing(tmp_path, card_shot):
    """Decoded to colour, a picture loses its alpha channel: one transparent everywhere shows
    nothing, and is refused so rather than read as the card its hidden colours hold."""
    bgra = cv2.cvtColor(card_shot.image, cv2.COLOR_BGR2BGRA)
    path = tmp_path / "card.png"
    bgra[..., 3] = 0
    path.write_bytes(data_of(".png", bgra))
    with pytest.raises(picture.PictureError) as caught:
        picture.read(str(path))
    assert (caught.value.reason, caught.value.detail) == ("no card found",
                                                          "a PNG picture transparent everywhere: it shows nothing")
    bgra[:10, :10, 3] = 255  # a corner shows
    path.write_bytes(data_of(".png", bgra))
    assert picture.read(str(path)).shape == card_shot.image.shape
