"""`shoed vision identify` and `shoed vision watch`: the camera fallback at the command line.

`identify --json` prints a JSON list with one object per image, in the order
given: {"file", "card", "confidence"}, plus "reason" when "card" is null (the
card could not be read with enough confidence, no card was found, the glyphs
are too small to tell the candidates apart, the cues disagree, or the file
could not be read; the values are listed in docs/vision.md) and, with some
reasons, "detail" (free text). This is a stable contract (tests outside this repository
read it): fields are added, never renamed. The exit status is 0 whenever the
images were looked at, even if none could be read; each says why.

`score` identifies labelled pictures (a test lab's own photographs: the card in
each file's name, or a labels file) and counts the answers right, wrong and
refused, in all, by rank, by suit and by folder (one folder a deck design), with
every wrong card named. `score --json` is a stable contract too. Its exit status
is 1 where any card was read wrong, 0 otherwise.

`watch` reads a camera, a video or a folder of frames and prints one line per
card dealt (JSON Lines with --json).
"""

from __future__ import annotations

import json
import os
import re
import sys
from typing import Any

from shoed import cli
from shoed.rules.cards import RANK_LETTERS, SUITS

IMAGE_SUFFIXES = (".jpg", ".jpeg", ".png", ".bmp", ".tif", ".tiff", ".webp", ".pgm", ".ppm")
LABELS_MAX = 64 << 20  # bytes of a labels file read at most: a million pictures' lines, many times over
NO_CARD = "-"  # a label: no card meant to be read here (a refusal is right, any card is wrong)
RANK_ORDER = tuple("10" if letter == "T" else letter for letter in RANK_LETTERS)  # as the counts name them
COLOUR_CAMERA_HELP = ("the pictures are a colour camera's: a black card in a picture that shows no colour (a "
                      "black card on grey, white or black cloth) is read, not refused as no_colour; never for a "
                      "monochrome camera's pictures, whose red cards would be read as black")
_CARD_TOKEN = re.compile(r"(?:10|[2-9TJQKA])[CDHS]")  # a card in a file name: upper case, a token of its own


def register(sub) -> None:
    vision = sub.add_parser("vision", help="read cards from photographs or a camera (the camera fallback)")
    vsub = vision.add_subparsers(dest="vision_command", metavar="ACTION")
    vsub.required = True

    ident = vsub.add_parser("identify", help="identify the card in each photograph (one card per image)")
    ident.add_argument("images", nargs="+", metavar="IMAGE", help="image files (JPEG, PNG, ...)")
    ident.add_argument("--json", action="store_true", help="print a JSON list (the contract)")
    ident.add_argument("--threshold", type=float, default=None, metavar="P",
                       help="confidence needed to name a card, 0..1 (default 0.9)")
    ident.add_argument("--colour-camera", action="store_true", help=COLOUR_CAMERA_HELP)
    ident.set_defaults(func=run_identify)

    score = vsub.add_parser(
        "score", help="identify labelled pictures and count them right, wrong and refused (exit 1 on a wrong card)",
        description="Each picture's card is the last token of its file name that names a card (IMG_0042_QS.jpg, "
                    "decks/anglo/10H.png), or its line in --labels. Folders are searched for pictures; each folder "
                    "is counted apart (one folder a deck design).")
    score.add_argument("paths", nargs="+", metavar="PATH", help="pictures, or folders of pictures (searched through)")
    score.add_argument("--labels", metavar="FILE",
                       help="lines of FILE,CARD (comma or tab; CARD '-' where no card is meant to be read, a "
                            "refusal then right); files relative to the labels file's folder")
    score.add_argument("--json", action="store_true", help="print the counts and every answer as JSON (a contract)")
    score.add_argument("--threshold", type=float, default=None, metavar="P",
                       help="confidence needed to name a card, 0..1 (default 0.9)")
    score.add_argument("--colour-camera", action="store_true", help=COLOUR_CAMERA_HELP)
    score.set_defaults(func=run_score)

    watch = vsub.add_parser("watch", help="report each card dealt under a camera, in a video or a folder of frames")
    watch.add_argument("source", metavar="SOURCE",
                       help="camera index (0), /dev/video0, a video file, a folder of images, rtsp:// or http:// URL")
    watch.add_argument("--roi", metavar="X,Y,W,H", help="region of interest in pixels (default: the whole frame)")
    watch.add_argument("--json", action="store_true", help="one JSON object per card (JSON Lines)")
    watch.add_argument("--realtime", action="store_true", help="play files at their frame rate")
    watch.add_argument("--seconds", type=cli.wait, default=None, help="stop after this long")
    watch.add_argument("--threshold", type=float, default=None, metavar="P", help="confidence needed (default 0.9)")
    watch.add_argument("--colour-camera", action="store_true",
                       help="the camera is a colour camera: a black card on grey cloth, with no colour in view, is read "
                            "(default: the empty view's cloth tells whether the camera sees colour)")
    watch.set_defaults(func=run_watch)


def _need_opencv() -> None:
    """The camera fallback needs OpenCV and numpy: without them, one line that says so."""
    import importlib

    import shoed.vision  # noqa: F401 - sets OpenCV's environment (its pixel limit, its log), read at its import
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


def identify_file(recognizer, path: str, colour: bool = False) -> dict:
    """One entry of the `identify --json` list. `colour`: the picture is known to be a colour camera's
    (--colour-camera)."""
    import os

    from shoed.vision import picture

    entry: dict = {"file": path, "card": None, "confidence": 0.0}
    if not os.path.exists(path):
        entry["reason"] = "no such file"
        return entry
    if os.path.isdir(path):
        entry["reason"] = "a folder, not an image"
        return entry
    try:
        image = picture.read(path)
    except picture.PictureError as exc:
        entry["reason"] = exc.reason
        if exc.detail is not None:
            entry["detail"] = exc.detail
        return entry
    result = recognizer.identify(image, colour=colour)
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
        entry = identify_file(recognizer, path, colour=args.colour_camera)
        entries.append(entry)
        if not args.json:
            if entry["card"]:
                print(f"{path}: {entry['card']} ({entry['confidence']:.2f})", flush=True)
            else:
                detail = f" ({entry['detail']})" if "detail" in entry else ""
                print(f"{path}: unreadable: {entry['reason']}{detail}", flush=True)
    if args.json:
        print(json.dumps(entries, indent=1))
    _refusal_hints(entries)
    return 0


# What a refusal many pictures share says of the camera, and what to do: one line on stderr each.
REFUSAL_HINTS = {
    "no_colour": "the pictures show no colour, as a monochrome camera's do; if a colour camera took them (a "
                 "black card on grey, white or black cloth shows none), --colour-camera reads them (on a camera "
                 "source: colour_camera = true)",
    "mirrored": "the rank glyphs read as ranks mirrored left to right, and no card is printed so; set the "
                "camera (or its driver) not to mirror its picture",
}


def _refusal_hints(entries: list[dict[str, Any]]) -> None:
    """Where pictures were refused for a reason that names a camera's setting (REFUSAL_HINTS), one
    line on stderr each: how many, and what to set right."""
    for reason, hint in REFUSAL_HINTS.items():
        refused = sum(1 for entry in entries if entry.get("reason") == reason)
        if refused:
            print(f"{refused} picture(s) refused as {reason}: {hint}", file=sys.stderr)


def _pictures(paths: list[str]) -> list[tuple[str, str]]:
    """(picture, its folder as counted) for every picture given or found under a folder given, in order."""
    from shoed.cli import CommandError

    found = []
    for path in paths:
        if not os.path.exists(path):
            raise CommandError(f"no such picture or folder: {path}")
        if os.path.isdir(path):
            for folder, dirs, files in os.walk(path):
                dirs.sort()
                for name in sorted(files):
                    if name.lower().endswith(IMAGE_SUFFIXES):
                        group = os.path.relpath(folder, path)
                        found.append((os.path.join(folder, name), group))
        else:
            found.append((path, os.path.basename(os.path.dirname(os.path.abspath(path)))))
    return found


def cards_named(path: str) -> list[str]:
    """The cards a file's name names, in order (its tokens that are cards, "TD" or "10D"), as shoed writes them."""
    from shoed.rules.cards import parse_card

    stem = os.path.splitext(os.path.basename(path))[0]
    return [parse_card(t).text for t in re.split(r"[^A-Za-z0-9]+", stem) if _CARD_TOKEN.fullmatch(t)]


def label_of_name(path: str) -> str | None:
    """The card a file's name gives (the last card it names), as shoed writes it; None."""
    named = cards_named(path)
    return named[-1] if named else None


def read_labels(file: str) -> dict[str, str]:
    """A labels file: real path of each picture -> its card (as shoed writes it) or NO_CARD."""
    from shoed.cli import CommandError
    from shoed.rules.cards import CardError, parse_card

    from shoed.files import TooLarge, read_regular

    try:
        text = read_regular(file, LABELS_MAX).decode("utf-8")
    except TooLarge:
        raise CommandError(f"labels {file} go on past {LABELS_MAX >> 20} MB: give a file of FILE,CARD lines") from None
    except OSError as exc:
        raise CommandError(f"cannot read labels {file}: {exc.strerror or exc}") from None
    except UnicodeDecodeError as exc:
        raise CommandError(f"cannot read labels {file}: {exc}") from None
    base = os.path.dirname(os.path.abspath(file))
    labels = {}
    for number, line in enumerate(text.splitlines(), 1):
        line = line.strip()
        if not line or line.startswith("#"):
            continue
        name, _, card = (part.strip() for part in line.replace("\t", ",").rpartition(","))
        if number == 1 and (name.lower(), card.lower()) == ("file", "card"):
            continue  # a header
        if not name:
            raise CommandError(f"labels {file} line {number}: write FILE,CARD, not {line!r}")
        if card.lower() in (NO_CARD, "none"):
            label = NO_CARD
        else:
            try:
                label = parse_card(card).text
            except CardError as exc:
                raise CommandError(f"labels {file} line {number}: {exc}") from None
        labels[os.path.realpath(os.path.join(base, name))] = label
    return labels


def outcome(label: str, card: str | None) -> str:
    """right, wrong or refused: a picture's answer against its label."""
    if card is None:
        return "refused"
    return "right" if card == label else "wrong"


def rank_of(label: str) -> str:
    return "10" if label[0] == "T" else label[:-1]


def tally(entries: list[dict[str, Any]]) -> dict[str, Any]:
    """The counts of `score --json` from its entries (each an `identify --json` entry with its `label`,
    `outcome` and `folder`): the pictures meant to be read right, wrong and refused, in all, by rank, by
    suit and by folder; refusals by reason; every wrong card; the pictures where no card is meant to be read."""
    def counts() -> dict[str, int]:
        return {"pictures": 0, "right": 0, "wrong": 0, "refused": 0}

    total, apart = counts(), counts()
    by_rank = {rank: counts() for rank in RANK_ORDER}
    by_suit = {suit: counts() for suit in SUITS}
    by_folder: dict[str, dict[str, int]] = {}
    refusals: dict[str, int] = {}
    wrong = []
    for entry in entries:
        label, result = entry["label"], entry["outcome"]
        if label == NO_CARD:
            groups = [apart]
        else:
            groups = [total, by_rank[rank_of(label)], by_suit[label[-1]],
                      by_folder.setdefault(entry["folder"], counts())]
        for group in groups:
            group["pictures"] += 1
            group[result] += 1
        if result == "refused":
            reason = str(entry.get("reason") or "").split(" (")[0]
            refusals[reason] = refusals.get(reason, 0) + 1
        elif result == "wrong":
            wrong.append({key: entry[key] for key in ("file", "label", "card", "confidence")})
    return {
        **total,
        "right_share": round(total["right"] / total["pictures"], 4) if total["pictures"] else None,
        "no_card_meant": apart,
        "refusals": dict(sorted(refusals.items(), key=lambda item: (-item[1], item[0]))),
        "by_rank": {rank: group for rank, group in by_rank.items() if group["pictures"]},
        "by_suit": {suit: group for suit, group in by_suit.items() if group["pictures"]},
        "by_folder": dict(sorted(by_folder.items())),
        "wrong_cards": wrong,
    }


def _line(groups: dict[str, dict[str, int]]) -> str:
    return ", ".join(f"{name} {group['right']}/{group['pictures']}" + (f" ({group['wrong']} wrong)" if group["wrong"]
                                                                       else "") for name, group in groups.items())


def run_score(args) -> int:
    from shoed.cli import CommandError

    _need_opencv()
    labels = read_labels(args.labels) if args.labels else {}
    pictures = _pictures(args.paths)
    if not pictures:
        raise CommandError(f"no pictures in {', '.join(args.paths)} ({', '.join(IMAGE_SUFFIXES)})")
    work, unlabelled, twice = [], [], []
    for path, folder in pictures:
        label = labels.get(os.path.realpath(path))
        if label is None:
            label = label_of_name(path)
            if len(set(cards_named(path))) > 1:
                twice.append((path, label))
        if label is None:
            unlabelled.append(path)
        else:
            work.append((path, folder, label))
    if twice:
        print(f"note: {len(twice)} picture name(s) name more than one card, and the last is taken: "
              f"{os.path.basename(twice[0][0])} as {twice[0][1]}; give them lines in --labels to say otherwise",
              file=sys.stderr)
    if unlabelled:
        raise CommandError(f"no card given for {len(unlabelled)} picture(s), the first {unlabelled[0]}: name the "
                           "card in the file name (IMG_0042_QS.jpg, 10H.png) or list it in --labels FILE")
    recognizer = _recognizer(args.threshold)
    entries = []
    for path, folder, label in work:
        entry = identify_file(recognizer, path, colour=args.colour_camera)
        entry.update(label=label, outcome=outcome(label, entry["card"]), folder=folder)
        entries.append(entry)
    counts = tally(entries)
    if args.json:
        print(json.dumps(counts | {"colour_camera": args.colour_camera, "entries": entries}, indent=1))
    else:
        share = f" ({counts['right_share']:.1%})" if counts["right_share"] is not None else ""
        print(f"{counts['pictures']} pictures with a card to read: {counts['right']} right{share}, "
              f"{counts['wrong']} wrong, {counts['refused']} refused")
        apart = counts["no_card_meant"]
        if apart["pictures"]:
            print(f"{apart['pictures']} with no card meant to be read: {apart['refused']} refused, "
                  f"{apart['wrong']} read as a card (wrong)")
        if counts["refusals"]:
            print("refused: " + ", ".join(f"{reason} {n}" for reason, n in counts["refusals"].items()))
        print("by rank: " + _line(counts["by_rank"]))
        print("by suit: " + _line(counts["by_suit"]))
        if len(counts["by_folder"]) > 1:
            print("by folder: " + _line(counts["by_folder"]))
        for bad in counts["wrong_cards"]:
            meant = "no card meant to be read" if bad["label"] == NO_CARD else bad["label"]
            print(f"WRONG {bad['file']}: {meant}, read as {bad['card']} ({bad['confidence']:.2f})")
    _refusal_hints(entries)
    return 1 if counts["wrong"] or counts["no_card_meant"]["wrong"] else 0


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

    config = WatchConfig(roi=parse_roi(args.roi), colour_camera=args.colour_camera)
    source = CameraSource(args.source, config, _recognizer(args.threshold), realtime=args.realtime)
    try:
        source.open()
    except CameraError as exc:
        raise CommandError(str(exc)) from None
    end = None if args.seconds is None else time.monotonic() + args.seconds
    hinted: set[str] = set()
    try:
        while not source.finished and (end is None or time.monotonic() < end):
            try:
                reads = source.poll(0.5)
            except (ValueError, CameraError) as exc:  # the region does not fit the frames, or they went over the size
                raise CommandError(str(exc)) from None
            for read in reads:
                if args.json:
                    print(json.dumps(read.to_json()), flush=True)
                elif read.card:
                    print(f"frame {read.frame_index}: {read.card} ({read.confidence:.2f})", flush=True)
                else:
                    print(f"frame {read.frame_index}: unreadable: {read.reason}", flush=True)
                if read.reason in REFUSAL_HINTS and read.reason not in hinted:
                    # the first card refused for a camera's setting says what to set, once, at once
                    hinted.add(read.reason)
                    print(f"a card refused as {read.reason}: {REFUSAL_HINTS[read.reason]}", file=sys.stderr, flush=True)
    finally:
        source.close()
    if not args.json:
        print(f"{source.frame_index + 1} frames", file=sys.stderr)
    return 0
