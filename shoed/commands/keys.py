"""`shoed keys`: CURVE key pairs for the daemon and its clients, and the allow-list.

    shoed keys new NAME --dir DIR      make DIR/NAME.key (public) and DIR/NAME.key_secret (0600)
    shoed keys allow FILE --dir DIR [--role ROLE]
                                       put a client's public key file on an allow-list, with
                                       its role: dealer (the default), pit, surveillance or
                                       display (a display board: reads, changes nothing)
    shoed keys list --dir DIR          the keys on an allow-list
    shoed keys journal --journal DIR --table T --verify-key FILE|-
                                       make a forward-secure journal's key pair: the sealing
                                       state goes into DIR (the box), the verification key to
                                       FILE (removable media, for surveillance) or, with `-`,
                                       to stdout only; it never stays on the box

Allowing a client is copying its public `.key` file into the daemon's
allow-list directory (by hand, or with `keys allow`, which also checks it is a
public key and not a secret one); the daemon reads the list at start and on
reload. Secret `.key_secret` files never leave the machine they were made on.
"""

from __future__ import annotations

import json

from shoed import cli

ALLOW_HELP = (
    "To allow a client, copy its public NAME.key file (never the .key_secret) into the daemon's "
    "allow-list directory, or use this command, which checks the file first. The daemon reads "
    "the directory when it starts and when told to reload."
)


def register(sub) -> None:
    from shoed.table.events import ROLES

    keys = sub.add_parser("keys", help="CURVE key pairs and the allow-list of the command endpoint")
    ksub = keys.add_subparsers(dest="keys_command", metavar="ACTION")
    ksub.required = True

    new = ksub.add_parser("new", help="make a key pair: NAME.key (public) and NAME.key_secret (mode 0600)")
    new.add_argument("name", metavar="NAME", help="key name, e.g. the client's host or role (dealer-console-1)")
    new.add_argument("--dir", default=".", help="directory to write the two files in (default: .)")
    new.add_argument("--json", action="store_true", help="print {name, public_key, public_file, secret_file}")
    new.set_defaults(func=run_new)

    allow = ksub.add_parser("allow", help="put a client's public key file on an allow-list", description=ALLOW_HELP)
    allow.add_argument("file", metavar="FILE", help="the client's public NAME.key file")
    allow.add_argument("--dir", required=True, help="the daemon's allow-list directory")
    allow.add_argument("--name", help="name on the allow-list (default: the file's name)")
    allow.add_argument("--role", choices=ROLES,
                       help="what the key may do: dealer (deal, confirm, correct; the default for a key "
                       "without a role), pit or surveillance (also void a coup and unlock a held table), "
                       "display (a display board: the display endpoints and status, no command that "
                       "changes the table)")
    allow.set_defaults(func=run_allow)

    lst = ksub.add_parser("list", help="the keys on an allow-list")
    lst.add_argument("--dir", required=True, help="the allow-list directory")
    lst.add_argument("--json", action="store_true", help="one JSON object per key, as a list")
    lst.set_defaults(func=run_list)

    jk = ksub.add_parser(
        "journal", help="make a forward-secure journal's key pair: sealing state for the box, verify key off it",
        description="The sealing state is written to JOURNAL/TABLE.seal (mode 0600); the daemon seals every "
        "shoe file with a key that moves on with each file, overwriting the old one in place. The "
        "verification key never stays on the box: `--verify-key -` prints it to stdout only (the lines "
        "about it go to stderr), to be taken to surveillance; `--verify-key FILE` writes it to FILE, a "
        "path on removable media or off the box (a FILE on the box's own disk is warned of: deleting it "
        "does not erase it from the disk). `shoed journal verify --verify-key FILE` checks every file "
        "with it.",
    )
    jk.add_argument("--journal", required=True, metavar="DIR", type=cli.journal_path, help="the table's journal directory (empty)")
    jk.add_argument("--table", required=True, help="the table id")
    jk.add_argument("--verify-key", required=True, metavar="FILE", type=cli.path("the verification key file"),
                    help="where to write the verification key: a file off the box (removable media), or - "
                    "for stdout only")
    jk.add_argument("--json", action="store_true", help="print {table, key_id, seal_file, verify_key_file} "
                    "(with --verify-key -: verify_key_file null, and verify_key, the key in hex)")
    jk.set_defaults(func=run_journal)


def run_new(args) -> int:
    from shoed.cli import CommandError
    from shoed.net.curve import CurveError, create_key_pair

    try:
        public_file, secret_file, public_key = create_key_pair(args.dir, args.name)
    except CurveError as exc:
        raise CommandError(str(exc)) from None
    if args.json:
        print(json.dumps({
            "name": args.name, "public_key": public_key,
            "public_file": str(public_file), "secret_file": str(secret_file),
        }))
    else:
        print(public_key)
        print(f"public key: {public_file}  (give this file to the daemon's allow-list, or to clients as the server key)")
        print(f"secret key: {secret_file}  (mode 0600; keep it on this machine)")
    return 0


def run_allow(args) -> int:
    import sys
    from pathlib import Path

    from shoed.cli import CommandError
    from shoed.files import replace_whole, what_is_at
    from shoed.net.curve import (CurveError, is_key_name, key_role, load_allow_list, load_public_key, named_role,
                                 with_role)

    src = Path(args.file)
    name = args.name or src.stem
    if src.suffix != ".key":
        raise CommandError(f"{src} is not a public .key file")
    if not is_key_name(name):
        # as `keys new`: a name is a file in the allow-list directory, never a path out of it
        given = "--name" if args.name else f"the name of {src}"
        raise CommandError(f"{given}: a key name is letters, digits, '.', '_' or '-' (no extension), not {name!r}"
                           + ("" if args.name else "; choose --name"))
    try:
        public_key = load_public_key(src)
        with open(src, "rb") as f:
            if b"secret-key" in f.read():
                raise CommandError(f"{src} contains a secret key; give the public .key file only")
        # The first key: the daemon may not have started yet. No one else may write the list.
        Path(args.dir).mkdir(mode=0o755, parents=True, exist_ok=True)
        existing = load_allow_list(args.dir)
        named = named_role(src)
        role = args.role or named or key_role(src)
        text = with_role(src.read_text(encoding="utf-8"), role)
    except (CurveError, OSError, UnicodeDecodeError) as exc:
        raise CommandError(str(exc)) from None
    dest = Path(args.dir) / f"{name}.key"
    if public_key in existing:
        dest = Path(args.dir) / f"{existing[public_key]}.key"
        try:
            had = key_role(dest)
        except CurveError as exc:
            raise CommandError(str(exc)) from None
        if args.role is None or had == role:
            print(f"{public_key.decode()} is already allowed as {existing[public_key]} ({had})")
            return 0
        # The same key with another role: its file is rewritten in place (below).
    else:
        try:
            taken = what_is_at(dest) is not None
        except OSError as exc:
            raise CommandError(f"cannot look at {dest}: {exc.strerror or exc}") from None
        if taken:
            raise CommandError(f"{dest} already exists with another key; choose --name")
    try:
        replace_whole(dest, text.encode("utf-8"), mode=0o644)
    except OSError as exc:
        raise CommandError(f"cannot write {dest}: {exc}") from None
    if args.role is None and named is None:
        print(f"warning: no --role given: {dest.stem} is allowed as a dealer (it may deal, confirm and "
              "correct); give a display board --role display", file=sys.stderr)
    print(f"allowed {dest.stem} as {role}: {public_key.decode()}  ({dest}); reload the daemon "
          "(systemctl reload shoed, or kill -HUP) to take it into use")
    return 0


def run_list(args) -> int:
    from shoed.cli import CommandError
    from shoed.net.curve import CurveError, load_allow_list, load_roles

    try:
        keys = load_allow_list(args.dir)
        roles = load_roles(args.dir, keys)
    except CurveError as exc:
        raise CommandError(str(exc)) from None
    rows = sorted(((name, key.decode(), roles[key]) for key, name in keys.items()))
    if args.json:
        print(json.dumps([{"name": n, "public_key": k, "role": r} for n, k, r in rows]))
    else:
        for name, key, role in rows:
            print(f"{name:32} {key}  {role}")
    return 0


def _on_the_box(path, journal) -> str | None:
    """Where a verification key file is on the box's own disk (the journal's file system or the
    root's), in words; None when it is elsewhere (removable media, a network share)."""
    import os

    folder = path.resolve().parent
    try:
        dev = os.stat(folder).st_dev
    except OSError:
        return None
    for what, other in (("the journal's", journal), ("the root", "/")):
        try:
            if os.stat(other).st_dev == dev:
                return f"{what} file system"
        except OSError:
            pass
    return None


def run_journal(args) -> int:
    import os
    import secrets
    import sys
    from pathlib import Path

    from shoed.cli import CommandError
    from shoed.files import what_is_at
    from shoed.journal import chain as ch
    from shoed.journal.seal import KEY_BYTES, SealState, first_key, key_id
    from shoed.journal.store import seal_name
    from shoed.net.wire import WireError, check_table_id

    try:
        check_table_id(args.table)  # the daemon's own check: a table it would refuse has no journal keys
    except WireError as exc:
        raise CommandError(str(exc)) from None
    journal = Path(args.journal)
    to_stdout = args.verify_key == "-"
    seal_file = journal / seal_name(args.table)
    verify_file = None if to_stdout else Path(args.verify_key)
    try:  # a folder on the way this user may not enter, or the journal's it may not list: one line
        where = journal
        if what_is_at(journal) == "folder" and any(
            (p := ch.parse_file_name(name)) is not None and p.table == args.table for name in os.listdir(journal)
        ):
            raise CommandError(f"{journal} already holds a journal of table {args.table}: "
                               "a sealed journal starts empty")
        for path in (seal_file, verify_file):
            if path is not None:
                where = path
                if what_is_at(path) is not None:
                    raise CommandError(f"{path} already exists: it is never overwritten")
    except OSError as exc:
        raise CommandError(f"cannot look at {where}: {exc.strerror or exc}") from None
    verify_key = secrets.token_bytes(KEY_BYTES)
    state = SealState(key_id(verify_key), 0, first_key(verify_key))
    info = sys.stderr if to_stdout else sys.stdout
    try:
        journal.mkdir(parents=True, exist_ok=True)
        on_box = _on_the_box(verify_file, journal) if verify_file is not None else None
        if to_stdout:
            # The key itself, alone on stdout (a key file as `journal verify --verify-key` reads it),
            # before the box gets its state: a key that cannot be handed over seals nothing.
            if args.json:
                print(json.dumps({"table": args.table, "key_id": state.key_id, "seal_file": str(seal_file),
                                  "verify_key_file": None, "verify_key": verify_key.hex()}))
            else:
                print(verify_key.hex())
            sys.stdout.flush()
        writes = [(seal_file, state.to_bytes())]
        if verify_file is not None:
            writes.insert(0, (verify_file, verify_key.hex().encode() + b"\n"))
        for path, data in writes:
            fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_CLOEXEC, 0o600)
            try:
                os.write(fd, data)
                os.fsync(fd)
            finally:
                os.close(fd)
    except FileExistsError as exc:
        raise CommandError(f"{exc.filename} already exists: it is never overwritten"
                           + ("; the verify key printed is not used" if to_stdout else "")) from None
    except OSError as exc:
        raise CommandError(f"cannot write the journal keys: {exc}"
                           + ("; the verify key printed is not used" if to_stdout else "")) from None
    if args.json and not to_stdout:
        print(json.dumps({"table": args.table, "key_id": state.key_id, "seal_file": str(seal_file),
                          "verify_key_file": str(verify_file)}))
    elif not args.json:
        print(f"key {state.key_id} for table {args.table}", file=info)
        print(f"sealing state: {seal_file}  (stays on the box; the daemon moves it on with every shoe file)",
              file=info)
        if verify_file is None:
            print("verify key:    printed on stdout only  (take it to surveillance; it never stays on the box)",
                  file=info)
        else:
            print(f"verify key:    {verify_file}  (take it to surveillance; it never stays on the box)", file=info)
    if on_box is not None:
        print(f"warning: the verify key {verify_file} is on {on_box}, the box's own disk: whoever gets the box "
              "can read it, and deleting it does not erase it from the disk; write it to removable media, or "
              "use --verify-key - and keep it off the box", file=sys.stderr)
    return 0
