"""Pictures from files, their size checked before a pixel is decoded.

A picture file says its size in its header, and a decoder allocates what the header says: a
PNG of 48 KB can say 20,000 x 20,000 pixels and cost 1.2 GB once decoded (three bytes a pixel),
enough to have the box's memory run out under the daemon. So the header is read here first,
for every format shoed reads (JPEG, PNG, BMP, TIFF, WebP, GIF, PNM), and a picture of more than
MAX_PIXELS is refused before OpenCV decodes it; a file in any other format is refused too,
as its size cannot be told. A JPEG without its end marker after the scan, or a PNG without its
IEND chunk, is cut short and refused too (a decoder fills what is missing with grey and reads
the rest), and so is a picture whose alpha channel is transparent everywhere: it shows nothing.
`read(path)` is the one way `shoed vision` and the camera source's folder of frames open a picture.
"""

from __future__ import annotations

import os
import stat
import struct
from typing import BinaryIO

import numpy as np

# A phone's 108-megapixel photograph (12,000 x 9,000) is read; a card needs far fewer pixels,
# and a picture larger than this is refused (360 MB once decoded).
MAX_PIXELS = 120_000_000
FORMATS = "JPEG, PNG, BMP, TIFF, WebP, GIF or PNM"
# ISO base media files whose brand is a HEIF image's (HEIC, a phone camera's default): OpenCV reads none
HEIF_BRANDS = frozenset({b"heic", b"heix", b"hevc", b"hevx", b"heim", b"heis", b"mif1", b"msf1", b"avif", b"avis"})

UNREADABLE = "cannot read file as an image"
TOO_LARGE = "picture too large"
NOTHING_SHOWN = "no card found"  # a picture transparent everywhere, as the recognizer says of an empty one
CUT_SHORT = "the file is cut short"


class PictureError(Exception):
    """A file that is not read as a picture: `reason` (a `shoed vision identify --json` reason
    value) and, where more can be said, `detail`."""

    def __init__(self, reason: str, detail: str | None = None) -> None:
        super().__init__(reason if detail is None else f"{reason} ({detail})")
        self.reason = reason
        self.detail = detail


def read(path: str) -> np.ndarray:
    """The picture in the file at `path`, as OpenCV's BGR array; PictureError where it is not a
    picture shoed reads, or one too large to decode (MAX_PIXELS)."""
    import cv2

    try:
        # never blocking: a pipe opened for reading waits for a writer, and a device may never end
        fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK | getattr(os, "O_CLOEXEC", 0))
        with open(fd, "rb") as f:
            mode = os.fstat(f.fileno()).st_mode
            if not stat.S_ISREG(mode):
                raise PictureError(UNREADABLE, f"not a file but {kind_of(mode)}: give a picture file")
            found = size(f)
            if found is not None and not _whole(f, found[0]):
                raise PictureError(UNREADABLE, f"{CUT_SHORT}: a {found[0]} file without its end ({_END[found[0]]})")
            alpha = found is not None and _may_have_alpha(f, found[0])
    except PermissionError:
        raise PictureError("permission denied") from None
    except OSError as exc:
        raise PictureError(UNREADABLE, exc.strerror or str(exc)) from None
    if found is None:
        raise PictureError(UNREADABLE, _unknown(path))
    kind, width, height = found
    if width <= 0 or height <= 0:
        raise PictureError(UNREADABLE, f"a {kind} file whose header gives no size")
    if not fits(width, height):
        raise PictureError(TOO_LARGE, f"a {kind} of {width} x {height} pixels, at most "
                                      f"{MAX_PIXELS // 1_000_000} million read: shrink it")
    try:
        image = cv2.imread(path, cv2.IMREAD_COLOR)
    except cv2.error:
        image = None
    if image is None:
        raise PictureError(UNREADABLE, f"a {kind} file OpenCV cannot decode")
    if alpha and _transparent(path):
        raise PictureError(NOTHING_SHOWN, f"a {kind} picture transparent everywhere: it shows nothing")
    return image


_END = {"JPEG": "the end-of-image marker after its scan", "PNG": "its IEND chunk"}
PNG_CHUNKS = 1_000_000  # chunks walked at most looking for IEND (a 120-megapixel PNG has tens of thousands)


def _whole(f: BinaryIO, kind: str) -> bool:
    """Whether a JPEG or a PNG file goes on to its end: a JPEG's end-of-image marker after its first
    scan (what follows it, padding or a phone's trailer, is not the picture's), a PNG's IEND chunk.
    Other formats: True."""
    if kind == "JPEG":
        return _jpeg_whole(f)
    if kind == "PNG":
        f.seek(8)
        for _ in range(PNG_CHUNKS):
            header = f.read(8)
            if len(header) < 8:
                return False
            length, chunk = struct.unpack(">I4s", header)
            if chunk == b"IEND":
                return True
            f.seek(length + 4, 1)  # the data and its CRC
        return False
    return True


def _jpeg_whole(f: BinaryIO) -> bool:
    """A JPEG's segments chained to its first scan, then FF D9 after it: the entropy-coded data never
    holds FF but before 00 or a restart marker, so the first FF D9 after the scan's start is the end
    (or the end of a table between the scans of a progressive JPEG, which ends with its own)."""
    f.seek(2)
    for _ in range(JPEG_SEGMENTS):
        if f.read(1) != b"\xff":
            return False
        byte = f.read(1)
        while byte == b"\xff":
            byte = f.read(1)
        if not byte or byte[0] == 0xD9:
            return False
        marker = byte[0]
        if marker == 0x01 or 0xD0 <= marker <= 0xD7:
            continue
        length = f.read(2)
        if len(length) < 2:
            return False
        f.seek(struct.unpack(">H", length)[0] - 2, 1)
        if marker == 0xDA:
            break
    else:
        return False
    last = b""
    while True:
        block = f.read(1 << 20)
        if not block:
            return False
        if b"\xff\xd9" in last + block:
            return True
        last = block[-1:]


def _may_have_alpha(f: BinaryIO, kind: str) -> bool:
    """Whether a picture may carry an alpha channel (read apart, as decoding to colour drops it):
    a PNG of grey or colour with alpha, or a palette (with transparency, perhaps); a WebP that says
    it has alpha (or a lossless one, which may); a TIFF, a BMP or a GIF."""
    f.seek(0)
    head = f.read(32)
    if kind == "PNG":
        return head[25:26] in (b"\x03", b"\x04", b"\x06")
    if kind == "WebP":
        return head[12:16] == b"VP8L" or (head[12:16] == b"VP8X" and bool(head[20] & 0x10))
    return kind in ("TIFF", "BMP", "GIF")


def _transparent(path: str) -> bool:
    """Whether the picture's alpha channel is 0 everywhere (decoded as stored, alpha kept)."""
    import cv2

    try:
        raw = cv2.imread(path, cv2.IMREAD_UNCHANGED)
    except cv2.error:
        return False
    return raw is not None and raw.ndim == 3 and raw.shape[2] == 4 and not raw[..., 3].any()


def kind_of(mode: int) -> str:
    """What a path that is not a regular file is."""
    if stat.S_ISFIFO(mode):
        return "a pipe"
    if stat.S_ISCHR(mode) or stat.S_ISBLK(mode):
        return "a device"
    if stat.S_ISSOCK(mode):
        return "a socket"
    return "a folder" if stat.S_ISDIR(mode) else "no regular file"


def fits(width: int, height: int) -> bool:
    """Whether a picture (or a camera's frame) of `width` x `height` pixels is read: MAX_PIXELS at most."""
    return width * height <= MAX_PIXELS


def _unknown(path: str) -> str:
    """What to say of a file in no format shoed reads."""
    try:
        with open(path, "rb") as f:
            head = f.read(12)
    except OSError:
        head = b""
    if head[4:8] == b"ftyp" and head[8:12] in HEIF_BRANDS:
        return "a HEIC/HEIF picture, as phones save them: convert it to JPEG or PNG"
    return f"not a picture in a format shoed reads: {FORMATS}"


def size(f: BinaryIO) -> tuple[str, int, int] | None:
    """(format, width, height) from a picture file's header, read from its start; None where it
    is no format shoed reads or its header is cut short; PictureError where the header gives its
    size in a way a decoder would read otherwise (a TIFF's twice)."""
    head = f.read(32)
    try:
        if head.startswith(b"\x89PNG\r\n\x1a\n") and head[12:16] == b"IHDR":
            return ("PNG", *struct.unpack(">II", head[16:24]))
        if head.startswith(b"\xff\xd8"):
            return _jpeg(f)
        if head.startswith(b"BM"):
            return _bmp(head)
        if head[:4] in (b"II*\x00", b"MM\x00*"):
            return _tiff(f, head)
        if head.startswith(b"RIFF") and head[8:12] == b"WEBP":
            return _webp(head)
        if head[:6] in (b"GIF87a", b"GIF89a"):
            return ("GIF", *struct.unpack("<HH", head[6:10]))
        if head[:1] == b"P" and head[1:2] in b"123456" and head[2:3].isspace():
            return _pnm(head + f.read(256))
    except struct.error:  # a header cut short
        return None
    return None


# JPEG's start-of-frame markers (every coding process), which carry the frame's size
_SOF = frozenset({0xC0, 0xC1, 0xC2, 0xC3, 0xC5, 0xC6, 0xC7, 0xC9, 0xCA, 0xCB, 0xCD, 0xCE, 0xCF})
JPEG_SEGMENTS = 10_000  # segments before the frame's, at most (a camera's JPEG has a handful)


def _jpeg(f: BinaryIO) -> tuple[str, int, int] | None:
    """The size in the first start-of-frame segment, skipping the segments before it (EXIF, ICC
    profiles, tables) by their lengths."""
    f.seek(2)
    for _ in range(JPEG_SEGMENTS):
        byte = f.read(1)
        if byte != b"\xff":
            return None  # not at a marker: the segments do not chain
        while byte == b"\xff":  # fill bytes before the marker
            byte = f.read(1)
        if not byte:
            return None
        marker = byte[0]
        if marker == 0x01 or 0xD0 <= marker <= 0xD7:  # markers with no segment
            continue
        if marker in (0xD9, 0xDA):  # the end, or the scan, before any frame
            return None
        length = struct.unpack(">H", f.read(2))[0]
        if marker in _SOF:
            height, width = struct.unpack(">xHH", f.read(5))
            return ("JPEG", width, height)
        if length < 2:
            return None
        f.seek(length - 2, 1)
    return None


def _bmp(head: bytes) -> tuple[str, int, int]:
    if struct.unpack("<I", head[14:18])[0] == 12:  # the OS/2 header: 16-bit sizes
        return ("BMP", *struct.unpack("<HH", head[18:22]))
    width, height = struct.unpack("<ii", head[18:26])
    return ("BMP", width, abs(height))  # a negative height: the rows top down


TIFF_SIZE_TAGS = {256: "width", 257: "height"}


def _tiff(f: BinaryIO, head: bytes) -> tuple[str, int, int] | None:
    """The first image's size (tags 256 and 257 of the first directory). A directory that gives
    either twice, or as anything but one SHORT or LONG, is refused (PictureError): libtiff, which
    decodes for OpenCV, takes the first of two and reads other types its own way, so the size read
    here would not be the size decoded."""
    order = "<" if head[:2] == b"II" else ">"
    f.seek(struct.unpack(order + "I", head[4:8])[0])
    count = struct.unpack(order + "H", f.read(2))[0]
    found: dict[int, int] = {}
    for _ in range(min(count, 4096)):
        tag, kind, n, value = struct.unpack(order + "HHI4s", f.read(12))
        if tag in TIFF_SIZE_TAGS:
            what = TIFF_SIZE_TAGS[tag]
            if tag in found:
                raise PictureError(UNREADABLE, f"a TIFF file that gives its {what} twice")
            if kind not in (3, 4) or n != 1:
                raise PictureError(UNREADABLE, f"a TIFF file that gives its {what} as other than one whole "
                                               "number (SHORT or LONG)")
            found[tag] = struct.unpack(order + ("H" if kind == 3 else "I"), value[:2 if kind == 3 else 4])[0]
    if 256 not in found or 257 not in found:
        return None
    return ("TIFF", found[256], found[257])


def _webp(head: bytes) -> tuple[str, int, int] | None:
    chunk = head[12:16]
    if chunk == b"VP8 ":  # lossy: 14-bit sizes after the key frame's start code
        width, height = struct.unpack("<HH", head[26:30])
        return ("WebP", width & 0x3FFF, height & 0x3FFF)
    if chunk == b"VP8L":  # lossless: 14 bits each, less one
        bits = struct.unpack("<I", head[21:25])[0]
        return ("WebP", (bits & 0x3FFF) + 1, ((bits >> 14) & 0x3FFF) + 1)
    if chunk == b"VP8X":  # extended: 24 bits each, less one
        return ("WebP", int.from_bytes(head[24:27], "little") + 1, int.from_bytes(head[27:30], "little") + 1)
    return None


def _pnm(head: bytes) -> tuple[str, int, int] | None:
    """Netpbm's text header: the magic number, then width and height, with comments between."""
    words: list[bytes] = []
    for line in head[2:].split(b"\n"):
        words += line.split(b"#", 1)[0].split()
        if len(words) >= 2:
            break
    if len(words) < 2 or not (words[0].isdigit() and words[1].isdigit()):
        return None
    return ("PNM", int(words[0]), int(words[1]))
