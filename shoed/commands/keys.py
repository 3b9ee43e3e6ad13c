"""`shoed keys`: CURVE key pairs for the daemon and its clients, and the allow-list.

    shoed keys new NAME --dir DIR      make DIR/NAME.key (public) and DIR/NAME.key_secret (0600)
    shoed keys allow FILE --dir DIR [--role ROLE]
                                       put a client's public key file on an allow-list, with
                                       its role: dealer (the default), pit, surveillance or
                                       display (a display board: reads, changes nothing)
    shoed keys list --dir DIR          the keys on an allow-list
    shoed keys journal --journal DIR --table T --verify-key FILE
                                       make a forward-secure journal's key pair: the sealing
                                       state goes into DIR (the box), the verification key to
                                       FILE (surveillance; never left on the box)

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
        "shoe file with a key that moves on with each file, erasing the old one. The verification key "
        "goes to FILE: take it off the box to surveillance; `shoed journal verify --verify-key FILE` checks "
        "every file with it.",
    )
    jk.add_argument("--journal", required=True, metavar="DIR", type=cli.journal_path, help="the table's journal directory (empty)")
    jk.add_argument("--table", required=True, help="the table id")
    jk.add_argument("--verify-key", required=True, metavar="FILE", type=cli.path("the verification key file"), help="where to write the verification key")
    jk.add_argument("--json", action="store_true", help="print {table, key_id, seal_file, verify_key_file}")
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
    from pathlib import Path

    from shoed.cli import CommandError
    from shoed.files import replace_whole
    import sys

    from shoed.net.curve import (_NAME_RE, CurveError, key_role, load_allow_list, load_public_key, named_role,
                                 with_role)

    src = Path(args.file)
    name = args.name or src.stem
    if src.suffix != ".key":
        raise CommandError(f"{src} is not a public .key file")
    if not _NAME_RE.fullmatch(name) or name.endswith((".key", ".key_secret")):
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
    elif dest.exists():
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


def run_journal(args) -> int:
    import os
    import secrets
    from pathlib import Path

    from shoed.cli import CommandError
    from shoed.journal import chain as ch
    from shoed.journal.seal import KEY_BYTES, SealState, first_key, key_id
    from shoed.journal.store import seal_name
    from shoed.net.wire import WireError, check_table_id

    try:
        check_table_id(args.table)  # the daemon's own check: a table it would refuse has no journal keys
    except WireError as exc:
        raise CommandError(str(exc)) from None
    journal = Path(args.journal)
    seal_file, verify_file = journal / seal_name(args.table), Path(args.verify_key)
    if journal.is_dir() and any(
        (p := ch.parse_file_name(name)) is not None and p.table == args.table for name in os.listdir(journal)
    ):
        raise CommandError(f"{journal} already holds a journal of table {args.table}: a sealed journal starts empty")
    for path in (seal_file, verify_file):
        if path.exists():
            raise CommandError(f"{path} already exists: it is never overwritten")
    verify_key = secrets.token_bytes(KEY_BYTES)
    state = SealState(key_id(verify_key), 0, first_key(verify_key))
    try:
        journal.mkdir(parents=True, exist_ok=True)
        for path, data in ((verify_file, verify_key.hex().encode() + b"\n"), (seal_file, state.to_bytes())):
            fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_CLOEXEC, 0o600)
            try:
                os.write(fd, data)
                os.fsync(fd)
            finally:
                os.close(fd)
    except FileExistsError as exc:
        raise CommandError(f"{exc.filename} already exists: it is never overwritten") from None
    except OSError as exc:
        raise CommandError(f"cannot write the journal keys: {exc}") from None
    if args.json:
        print(json.dumps({"table": args.table, "key_id": state.key_id, "seal_file": str(seal_file),
                          "verify_key_file": str(verify_file)}))
    else:
        print(f"key {state.key_id} for table {args.table}")
        print(f"sealing state: {seal_file}  (stays on the box; the daemon moves it on with every shoe file)")
        print(f"verify key:    {verify_file}  (take it off the box to surveillance, then delete it here)")
    return 0
