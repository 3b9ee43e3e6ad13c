"""`shoed vision identify` and `shoed vision watch`: the camera fallback at the command line.

`identify --json` prints a JSON list with one object per image, in the order
given: {"file", "card", "confidence"}, plus "reason" when "card" is null (the
card could not be read with enough confidence, no card was found, the glyphs
are too small to tell the candidates apart, the cues disagree, or the file
could not be read; the values are listed in docs/vision.md) and, with some
reasons, "detail" (free text). This is a stable contract (tests outside this repository
read it): fields are added, never renamed. The exit status is 0 whenever the
images were looked at, even if none could be read; each says why.

`watch` reads a camera, a video or a folder of frames and prints one line per
card dealt (JSON Lines with --json).
"""

from __future__ import annotations

import json
import sys

from shoed import cli


def register(sub) -> None:
    vision = sub.add_parser("vision", help="read cards from photographs or a camera (the camera fallback)")
    vsub = vision.add_subparsers(dest="vision_command", metavar="ACTION")
    vsub.required = True

    ident = vsub.add_parser("identify", help="identify the card in each photograph (one card per image)")
    ident.add_argument("images", nargs="+", metavar="IMAGE", help="image files (JPEG, PNG, ...)")
    ident.add_argument("--json", action="store_true", help="print a JSON list (the contract)")
    ident.add_argument("--threshold", type=float, default=None, metavar="P",
                       help="confidence needed to name a card, 0..1 (default 0.9)")
    ident.set_defaults(func=run_identify)

    watch = vsub.add_parser("watch", help="report each card dealt under a camera, in a video or a folder of frames")
    watch.add_argument("source", metavar="SOURCE",
                       help="camera index (0), /dev/video0, a video file, a folder of images, rtsp:// or http:// URL")
    watch.add_argument("--roi", metavar="X,Y,W,H", help="region of interest in pixels (default: the whole frame)")
    watch.add_argument("--json", action="store_true", help="one JSON object per card (JSON Lines)")
    watch.add_argument("--realtime", action="store_true", help="play files at their frame rate")
    watch.add_argument("--seconds", type=cli.wait, default=None, help="stop after this long")
    watch.add_argument("--threshold", type=float, default=None, metavar="P", help="confidence needed (default 0.9)")
    watch.set_defaults(func=run_watch)


def _need_opencv() -> None:
    """The camera fallback needs OpenCV and numpy: without them, one line that says so."""
    import importlib

    from shoed.cli import CommandError

    for module, what in (("numpy", "numpy"), ("cv2", "OpenCV")):
        try:
            importlib.import_module(module)
        except ImportError as exc:
            raise CommandError(f"shoed vision needs {what} ({exc}): pip install 'shoed[camera]'") from None


def _recognizer(threshold):
    from shoed.cli import CommandError
    from shoed.vision.model import ModelError
    from shoed.vision.recognize import DEFAULT_THRESHOLD, Recognizer

    if threshold is not None and not 0.0 < threshold <= 1.0:
        raise CommandError(f"--threshold must be in (0, 1], not {threshold}")
    try:
        return Recognizer(threshold=DEFAULT_THRESHOLD if threshold is None else threshold)
    except ModelError as exc:
        raise CommandError(str(exc)) from None


def identify_file(recognizer, path: str) -> dict:
    """One entry of the `identify --json` list."""
    import os

    import cv2

    entry: dict = {"file": path, "card": None, "confidence": 0.0}
    if not os.path.exists(path):
        entry["reason"] = "no such file"
        return entry
    if os.path.isdir(path):
        entry["reason"] = "a folder, not an image"
        return entry
    try:
        image = cv2.imread(path, cv2.IMREAD_COLOR)
    except cv2.error:
        image = None
    if image is None:
        entry["reason"] = "cannot read file as an image" if os.access(path, os.R_OK) else "permission denied"
        return entry
    result = recognizer.identify(image)
    entry["card"] = result.card
    entry["confidence"] = round(float(result.confidence), 4)
    if result.card is None:
        entry["reason"] = result.reason
        if result.detail is not None:
            entry["detail"] = result.detail
    return entry


def run_identify(args) -> int:
    _need_opencv()
    recognizer = _recognizer(args.threshold)
    entries = []
    for path in args.images:
        entry = identify_file(recognizer, path)
        entries.append(entry)
        if not args.json:
            if entry["card"]:
                print(f"{path}: {entry['card']} ({entry['confidence']:.2f})", flush=True)
            else:
                print(f"{path}: unreadable: {entry['reason']}", flush=True)
    if args.json:
        print(json.dumps(entries, indent=1))
    return 0


def parse_roi(text: str | None):
    from shoed.cli import CommandError

    if text is None:
        return None
    try:
        x, y, w, h = (int(v) for v in text.split(","))
    except ValueError:
        raise CommandError(f"bad --roi {text!r}: write X,Y,W,H in pixels, e.g. 400,120,480,480") from None
    if x < 0 or y < 0 or w <= 0 or h <= 0:
        raise CommandError(f"bad --roi {text!r}: x and y at least 0, width and height above 0")
    return (x, y, w, h)


def run_watch(args) -> int:
    import time

    from shoed.cli import CommandError

    _need_opencv()
    from shoed.vision.source import CameraError, CameraSource, WatchConfig

    config = WatchConfig(roi=parse_roi(args.roi))
    source = CameraSource(args.source, config, _recognizer(args.threshold), realtime=args.realtime)
    try:
        source.open()
    except CameraError as exc:
        raise CommandError(str(exc)) from None
    end = None if args.seconds is None else time.monotonic() + args.seconds
    try:
        while not source.finished and (end is None or time.monotonic() < end):
            try:
                reads = source.poll(0.5)
            except ValueError as exc:  # the region does not fit the frames
                raise CommandError(str(exc)) from None
            for read in reads:
                if args.json:
                    print(json.dumps(read.to_json()), flush=True)
                elif read.card:
                    print(f"frame {read.frame_index}: {read.card} ({read.confidence:.2f})", flush=True)
                else:
                    print(f"frame {read.frame_index}: unreadable: {read.reason}", flush=True)
    finally:
        source.close()
    if not args.json:
        print(f"{source.frame_index + 1} frames", file=sys.stderr)
    return 0
