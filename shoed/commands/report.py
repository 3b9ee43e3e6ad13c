"""`shoed report`: a shoe's scoreboard and statistics from the journal, as a PNG and an HTML page.

For surveillance reports. The journal is read with every hash and link
checked (a journal that is not intact is refused, and `shoed journal verify`
says where); the drawing is in `shoed.display` (summary, board, png, html).
"""

from __future__ import annotations

import sys

from shoed import cli
from shoed.files import is_stream


def register(sub) -> None:
    p = sub.add_parser(
        "report",
        help="a shoe's scoreboard and statistics from the journal, as PNG (and HTML) for surveillance",
        description=(
            "Draw one shoe of a journal: bead plate, big road, derived roads, and the statistics "
            "(results, pairs, naturals, coups, voids, misdeals, reconciliation, alarms) with where in the "
            "journal they come from. The PNG needs Pillow (pip install 'shoed[report]'); the HTML page is "
            "self-contained (inline SVG). By default the last shoe opened in the journal."
        ),
    )
    p.add_argument("journal", metavar="JOURNAL", type=cli.journal_path, help="journal directory or file")
    p.add_argument("--out", metavar="FILE", help="PNG to write")
    p.add_argument("--html", metavar="FILE", help="HTML page to write")
    p.add_argument("--shoe", metavar="ID", help="the shoe (default: the last one opened)")
    p.add_argument("--table", metavar="ID", help="the table, when the journal directory holds several")
    p.add_argument("--secret-file", metavar="FILE", help="the journal's HMAC secret, for a keyed journal")
    p.add_argument("--verify-key", metavar="FILE",
                   help="the verification key of a forward-secure (sealed) journal (made by `shoed keys journal`)")
    p.add_argument("--list", action="store_true", help="list the journal's shoes and exit")
    p.set_defaults(func=run)


def run(args) -> int:
    from pathlib import Path

    from shoed.cli import CommandError
    from shoed.display.summary import SummaryError, shoes_in, summarize

    if not (args.out or args.html or args.list):
        raise CommandError("say what to write: --out FILE.png and/or --html FILE.html (or --list)")
    if args.list and (args.out or args.html):
        raise CommandError("--list lists the journal's shoes and writes nothing: give --out/--html without --list")
    if args.out and not args.out.lower().endswith(".png"):
        raise CommandError(f"--out writes a PNG image: name it FILE.png, not {args.out}")
    if args.html and not (args.html.lower().endswith((".html", ".htm")) or is_stream(args.html)):
        raise CommandError(f"--html writes an HTML page: name it FILE.html, not {args.html}")
    _check_targets(args.journal, [(option, target) for option, target in (("--out", args.out),
                                                                         ("--html", args.html)) if target])
    from shoed.commands.journal import verify_keys

    keys = verify_keys(args)  # --secret-file or --verify-key, read as `shoed journal verify` reads them
    from shoed.journal import verify

    try:
        # The journal proved as `shoed journal verify` proves it (every file, the seq of the events, the
        # verified mark and, with a verification key, the sealing state) before a line of it is shown.
        records: list[dict] = []
        proved = verify(args.journal, keys, records)
    except FileNotFoundError as exc:
        raise CommandError(str(exc) if str(exc) else f"no journal at {args.journal}") from None
    if not proved.ok:
        raise CommandError(f"journal not intact at {proved.first_bad}: no report from a journal that is not intact "
                           f"(see shoed journal verify {args.journal})")
    if args.list:
        shoes = shoes_in(records)
        if not shoes:
            raise CommandError(f"no shoe was opened in the journal at {args.journal}")
        for table, shoe, coups in shoes:
            print(f"{table}\t{shoe}\t{coups} coups")
        return 0
    try:
        summary = summarize(records, shoe=args.shoe, table=args.table)
    except SummaryError as exc:
        raise CommandError(str(exc)) from None

    written = []
    if args.out:
        from shoed.display.board import scoreboard
        from shoed.display.png import ReportError, write_png

        board = scoreboard(summary)
        try:
            write_png(board, args.out)
        except ReportError as exc:
            raise CommandError(str(exc)) from None
        written.append(f"{args.out} ({board.width}x{board.height})")
    if args.html:
        from shoed.display.html import report_html

        try:
            _write_text(Path(args.html), report_html(summary))
        except OSError as exc:
            raise CommandError(f"cannot write {args.html}: {exc.strerror or exc}") from None
        written.append(args.html)
    counts = summary.counts()
    # where the report itself went to standard output (--html /dev/stdout), this line goes to stderr
    to = sys.stderr if any(_is_stdout(path) for path in (args.out, args.html) if path) else sys.stdout
    print(f"shoe {summary.shoe} of table {summary.table}: {counts['coups']} coups, {counts['results']} results, "
          f"{counts['voids']} voids, {counts['misdeals']} misdeals; wrote {', '.join(written)}", file=to)
    return 0


def _is_stdout(path: str) -> bool:
    """Whether `path` is this process's standard output (/dev/stdout, the file or pipe it is)."""
    import os

    try:
        one, out = os.stat(path), os.fstat(sys.stdout.fileno())
    except (OSError, ValueError):
        return False
    return (one.st_dev, one.st_ino) == (out.st_dev, out.st_ino)


def _check_targets(journal: str, targets: list[tuple[str, str]]) -> None:
    """Refuse, before a byte is written, a report that would land in the journal, the same file
    named twice, and a target that cannot be written: either both files are written or neither."""
    import os

    from shoed.cli import CommandError

    where = os.path.realpath(journal)
    if not os.path.exists(where):
        return  # no journal there: said when it is read
    folder = where if os.path.isdir(where) else os.path.dirname(where)
    seen: dict[str, str] = {}
    for option, target in targets:
        if is_stream(target):
            if not os.access(target, os.W_OK):
                raise CommandError(f"cannot write {target}: permission denied")
            continue
        real = os.path.realpath(target)
        if real == where or os.path.commonpath([real, folder]) == folder:
            raise CommandError(f"{option} {target} is inside the journal {journal}: write the report elsewhere")
        if real in seen:
            raise CommandError(f"{seen[real]} and {option} name the same file {target}: give each its own")
        seen[real] = option
        if os.path.isdir(real):
            raise CommandError(f"cannot write {target}: it is a folder")
        parent = os.path.dirname(real)
        if not os.path.isdir(parent):
            raise CommandError(f"cannot write {target}: no folder {parent}")
        if not os.access(parent, os.W_OK | os.X_OK):
            raise CommandError(f"cannot write {target}: permission denied in {parent}")


def _write_text(path, text: str) -> None:
    from shoed.files import write_whole

    write_whole(path, text.encode("utf-8"))
