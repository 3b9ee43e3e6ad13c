"""`shoed journal verify` and `shoed journal recall`: proving a journal and showing its last coups.

verify exits 0 when every record is intact and linked, 1 with the first bad
record when not, 2 when there is no journal at the path. recall prints the
last coups in their original order, read up to the first record that is not
intact (it works while the table is locked), and exits 1 if it stopped early.
The JSON of `--json` is a contract: fields are added, never renamed.
"""

from __future__ import annotations

import json
import sys


def register(sub) -> None:
    journal = sub.add_parser("journal", help="verify a journal's hash chain, recall the last coups")
    jsub = journal.add_subparsers(dest="journal_command", metavar="ACTION")
    jsub.required = True

    ver = jsub.add_parser("verify", help="check every hash and link of a journal file or directory")
    ver.add_argument("path", metavar="PATH", help="a journal file, or a directory of them")
    ver.add_argument("--secret-file", metavar="FILE", help="the HMAC secret of a keyed journal")
    ver.add_argument("--json", action="store_true", help="print one JSON object")
    ver.set_defaults(func=run_verify)

    rec = jsub.add_parser("recall", help="the last coups: cards in draw order, totals, outcome, void flag")
    rec.add_argument("path", metavar="PATH", help="a journal file, or a directory of them")
    rec.add_argument("--last", type=_positive, default=10, metavar="N", help="how many coups (default 10)")
    rec.add_argument("--table", help="the table, when the directory holds several tables' journals")
    rec.add_argument("--secret-file", metavar="FILE", help="the HMAC secret of a keyed journal")
    rec.add_argument("--json", action="store_true", help="print one JSON object")
    rec.set_defaults(func=run_recall)


def _positive(text: str) -> int:
    import argparse

    try:
        value = int(text)
    except ValueError:
        value = 0
    if value < 1:
        raise argparse.ArgumentTypeError(f"{text!r} is not a positive whole number")
    return value


def read_secret(path: str | None) -> bytes | None:
    """The secret from a file, as the daemon reads its journal_secret_file:
    the file's bytes with surrounding whitespace removed."""
    from shoed.cli import CommandError

    if path is None:
        return None
    try:
        with open(path, "rb") as f:
            secret = f.read().strip()
    except OSError as exc:
        raise CommandError(f"cannot read the secret file {path}: {exc}") from None
    if not secret:
        raise CommandError(f"the secret file {path} is empty")
    return secret


def run_verify(args) -> int:
    from shoed.cli import CommandError
    from shoed.journal.reader import verify

    secret = read_secret(args.secret_file)
    try:
        report = verify(args.path, secret)
    except FileNotFoundError as exc:
        raise CommandError(str(exc)) from None
    checked, mismatched = _commitments(args.path, secret) if report.ok else (0, [])
    if args.json:
        print(json.dumps(report.to_json() | {"commitments": {"checked": checked, "mismatched": mismatched}}))
    else:
        if checked:
            print(f"commitments: {_count(checked, 'shuffled shoe')} checked against their reveal, "
                  f"{len(mismatched)} not matching")
        for line in mismatched:
            print(f"COMMITMENT NOT MATCHED: {line}")
        for note in report.notes:
            print(f"note: {note}", file=sys.stderr)
        if report.ok:
            heads = "; ".join(f"table {t} head {h}" for t, h in report.heads.items()) or "no records"
            print(f"intact: {_count(report.files, 'file')}, {_count(report.records, 'record')}; {heads}")
        else:
            print(f"NOT INTACT at {report.first_bad}")
            print(f"{_count(report.records, 'record')} before it {'is' if report.records == 1 else 'are'} intact")
    return 0 if report.ok and not mismatched else 1


def _commitments(path, secret) -> tuple[int, list[str]]:
    """A card-reading shuffler's shoes: each commitment against its reveal (docs/shuffler.md)."""
    from shoed.journal.reader import iter_records
    from shoed.shuffle_table import commitment_problems

    return commitment_problems(iter_records(path, secret))


def _count(n: int, noun: str) -> str:
    return f"{n} {noun}{'' if n == 1 else 's'}"


def run_recall(args) -> int:
    from shoed.cli import CommandError
    from shoed.journal.reader import read_recent
    from shoed.journal.recall import recall

    secret = read_secret(args.secret_file)
    try:
        reading = read_recent(args.path, args.last, secret, table=args.table)
    except FileNotFoundError as exc:
        raise CommandError(str(exc)) from None
    except ValueError as exc:
        raise CommandError(f"{exc} with --table") from None
    coups = recall(reading.records, args.last)
    if args.json:
        print(
            json.dumps(
                {
                    "coups": [c.to_json() for c in coups],
                    "stopped_at": reading.stopped_at.to_json() if reading.stopped_at else None,
                    "notes": reading.notes,
                }
            )
        )
    else:
        for note in reading.notes:
            print(f"note: {note}", file=sys.stderr)
        if not coups:
            print("no coups recorded")
        for coup in coups:
            print(coup.describe())
        if reading.stopped_at is not None:
            print(f"STOPPED: the journal is not intact at {reading.stopped_at}; nothing after it is shown")
    return 1 if reading.stopped_at is not None else 0
