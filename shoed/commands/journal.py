"""`shoed journal verify` and `shoed journal recall`: proving a journal and showing its last coups.

verify exits 0 when every record is intact and linked, 1 with the first bad
record when not, 2 when there is no journal at the path. A table's last file
that ends in a torn write (a last line without its newline, past the verified
mark: a write cut by a crash, never acknowledged, which the daemon cuts and
keeps as evidence at its next start) is no fault: a `note:` says so, and
`torn` in the JSON names it (file, offset, bytes); verify still exits 0. With --verify-key it
checks a forward-secure journal's every file with the key kept off the box,
and the box's sealing state and verified mark against it. With `--witness URL`
it also exits 1 when the journal no longer holds what the witness saw (one
line per finding; `witness` in the JSON). recall prints the
last coups in their original order, read up to the first record that is not
intact (it works while the table is locked), and exits 1 if it stopped early
(a torn last line, as verify tells it, is a note, not a stop).
The JSON of `--json` is a contract: fields are added, never renamed.
"""

from __future__ import annotations

import json
import sys

from shoed import cli


def register(sub) -> None:
    journal = sub.add_parser("journal", help="verify a journal's hash chain, recall the last coups")
    jsub = journal.add_subparsers(dest="journal_command", metavar="ACTION")
    jsub.required = True

    ver = jsub.add_parser("verify", help="check every hash and link of a journal file or directory")
    ver.add_argument("path", metavar="PATH", type=cli.journal_path, help="a journal file, or a directory of them")
    ver.add_argument("--secret-file", metavar="FILE", help="the HMAC secret of a keyed journal")
    ver.add_argument("--verify-key", metavar="FILE",
                     help="the verification key of a forward-secure journal (made by `shoed keys journal`)")
    ver.add_argument("--json", action="store_true", help="print one JSON object")
    ver.add_argument("--witness", metavar="URL",
                     help="also check the journal against what a witness saw (sqlite:///PATH, postgresql://...); "
                          "see docs/witness.md")
    ver.add_argument("--table", dest="witness_tables", action="append", metavar="TABLE",
                     help="with --witness: the table(s) to check (default: the tables whose journal is at PATH)")
    ver.add_argument("--archived-before", type=cli.positive_int, metavar="N",
                     help="with --witness: files numbered below N were archived (a retention policy): the "
                          "witness's heads in them are a note, not missing files")
    ver.set_defaults(func=run_verify)

    rec = jsub.add_parser("recall", help="the last coups: cards in draw order, totals, outcome, void flag")
    rec.add_argument("path", metavar="PATH", type=cli.journal_path, help="a journal file, or a directory of them")
    rec.add_argument("--last", type=cli.positive_int, default=10, metavar="N", help="how many coups (default 10)")
    rec.add_argument("--table", help="the table, when the directory holds several tables' journals")
    rec.add_argument("--secret-file", metavar="FILE", help="the HMAC secret of a keyed journal")
    rec.add_argument("--json", action="store_true", help="print one JSON object")
    rec.set_defaults(func=run_recall)


def read_secret(path: str | None) -> bytes | None:
    """The secret from a file, as the daemon reads its journal_secret_file:
    the file's bytes with surrounding whitespace removed."""
    from shoed.cli import CommandError

    from shoed.journal import SecretFileError, read_secret_file

    if path is None:
        return None
    try:
        return read_secret_file(path)
    except SecretFileError as exc:
        raise CommandError(f"the secret file {exc}") from None


def verify_keys(args):
    """The keys a verify was given: --secret-file, or --verify-key (not both)."""
    from shoed.cli import CommandError
    from shoed.journal.seal import Keys, SealError, read_verify_key

    secret = read_secret(args.secret_file)
    if args.verify_key is None:
        return Keys(secret=secret)
    if secret is not None:
        raise CommandError("give --secret-file or --verify-key, not both")
    from shoed.files import KEY_FILE_MAX, read_regular

    try:
        return Keys(verify_key=read_verify_key(read_regular(args.verify_key, KEY_FILE_MAX), args.verify_key))
    except OSError as exc:
        raise CommandError(f"cannot read the verify key {args.verify_key}: {exc.strerror or exc}") from None
    except SealError as exc:
        raise CommandError(f"cannot read the verify key: {exc}") from None


def run_verify(args) -> int:
    from shoed.cli import CommandError
    from shoed.journal.chain import GIVE_THE_KEY, NOT_VERIFIED, key_needed
    from shoed.journal.reader import verify

    try:
        report = verify(args.path, verify_keys(args))
    except FileNotFoundError as exc:
        raise CommandError(str(exc)) from None
    if not report.files and not report.first_bad and args.witness is None:
        # A directory without a journal proves nothing (a wrong path, or a journal removed whole:
        # --witness tells which); "intact" would read as a pass.
        raise CommandError(f"no journal files at {args.path}")
    witnessed = witness_report(args)
    checked, mismatched = _commitments(args.path, verify_keys(args)) if report.ok else (0, [])
    if args.json:
        out = report.to_json() | {"commitments": {"checked": checked, "mismatched": mismatched}}
        if witnessed is not None:
            out["witness"] = witnessed.to_json()
        print(json.dumps(out))
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
            sealed = "; every file sealed and checked with the verify key" if report.sealed else ""
            torn = (f"; {_count(len(report.torn), 'torn last line')} not counted (see the note)" if report.torn else "")
            print(f"intact: {_count(report.files, 'file')}, {_count(report.records, 'record')}; {heads}{sealed}{torn}")
        else:
            if report.first_bad is not None and key_needed(report.first_bad.reason):
                print(f"{NOT_VERIFIED} at {report.first_bad}: {GIVE_THE_KEY}")
            else:
                print(f"NOT INTACT at {report.first_bad}")
            print(f"{_count(report.records, 'record')} before it {'is' if report.records == 1 else 'are'} intact")
        if witnessed is not None:
            for note in witnessed.notes:
                print(f"note: {note}", file=sys.stderr)
            for finding in witnessed.findings:
                print(f"WITNESS: {finding}")
            if witnessed.ok:
                print(f"witness agrees: {_count(witnessed.heads, 'head')}, {_count(witnessed.events, 'event')} "
                      f"of {', '.join(witnessed.tables) or 'no table'} found as seen")
    return 0 if report.ok and not mismatched and (witnessed is None or witnessed.ok) else 1


def witness_report(args):
    """What the witness at --witness saw, looked up in the journal (None without --witness)."""
    from shoed.cli import CommandError

    if args.witness is None:
        if args.archived_before is not None:
            raise CommandError("--archived-before goes with --witness URL")
        return None
    from shoed.witness.compare import compare
    from shoed.witness.store import WitnessStore, WitnessStoreError

    try:
        with WitnessStore(args.witness, read_only=True) as store:
            return compare(args.path, store, args.witness_tables, args.archived_before)
    except WitnessStoreError as exc:
        raise CommandError(str(exc)) from None


def _commitments(path, secret) -> tuple[int, list[str]]:
    """A card-reading shuffler's shoes: each commitment against its reveal (docs/shuffler.md)."""
    from shoed.journal.reader import iter_records
    from shoed.table.shuffle import commitment_problems

    return commitment_problems(iter_records(path, secret, torn=True))


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
                    "torn": reading.torn.to_json() if reading.torn is not None else None,
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
