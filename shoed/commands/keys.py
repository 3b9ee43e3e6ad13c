"""`shoed keys`: CURVE key pairs for the daemon and its clients, and the allow-list.

    shoed keys new NAME --dir DIR      make DIR/NAME.key (public) and DIR/NAME.key_secret (0600)
    shoed keys allow FILE --dir DIR [--role ROLE]
                                       put a client's public key file on an allow-list, with
                                       its role: dealer (the default), pit or surveillance
    shoed keys list --dir DIR          the keys on an allow-list

Allowing a client is copying its public `.key` file into the daemon's
allow-list directory (by hand, or with `keys allow`, which also checks it is a
public key and not a secret one); the daemon reads the list at start and on
reload. Secret `.key_secret` files never leave the machine they were made on.
"""

from __future__ import annotations

import json

ALLOW_HELP = (
    "To allow a client, copy its public NAME.key file (never the .key_secret) into the daemon's "
    "allow-list directory, or use this command, which checks the file first. The daemon reads "
    "the directory when it starts and when told to reload."
)


def register(sub) -> None:
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
    allow.add_argument("--role", choices=("dealer", "pit", "surveillance"),
                       help="what the key may do: dealer (deal, confirm, correct; the default for a key "
                       "without a role), pit or surveillance (also void a coup and unlock a held table)")
    allow.set_defaults(func=run_allow)

    lst = ksub.add_parser("list", help="the keys on an allow-list")
    lst.add_argument("--dir", required=True, help="the allow-list directory")
    lst.add_argument("--json", action="store_true", help="one JSON object per key, as a list")
    lst.set_defaults(func=run_list)


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
    import os
    from pathlib import Path

    from shoed.cli import CommandError
    from shoed.net.curve import CurveError, key_role, load_allow_list, load_public_key, with_role

    src = Path(args.file)
    name = args.name or src.stem
    if src.suffix != ".key":
        raise CommandError(f"{src} is not a public .key file")
    try:
        public_key = load_public_key(src)
        with open(src, "rb") as f:
            if b"secret-key" in f.read():
                raise CommandError(f"{src} contains a secret key; give the public .key file only")
        existing = load_allow_list(args.dir)
        role = args.role or key_role(src)
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
    tmp = dest.with_name(f".{dest.name}.tmp")
    try:
        tmp.write_text(text, encoding="utf-8")
        os.chmod(tmp, 0o644)
        with open(tmp, "rb") as f:
            os.fsync(f.fileno())
        os.replace(tmp, dest)
        fd = os.open(dest.parent, os.O_RDONLY)
        try:
            os.fsync(fd)
        finally:
            os.close(fd)
    except OSError as exc:
        tmp.unlink(missing_ok=True)
        raise CommandError(f"cannot write {dest}: {exc}") from None
    print(f"allowed {dest.stem} as {role}: {public_key.decode()}  ({dest}); reload the daemon to take it into use")
    return 0


def run_list(args) -> int:
    from shoed.cli import CommandError
    from shoed.net.curve import CurveError, load_allow_list, load_roles

    try:
        keys = load_allow_list(args.dir)
        roles = load_roles(args.dir)
    except CurveError as exc:
        raise CommandError(str(exc)) from None
    rows = sorted(((name, key.decode(), roles[key]) for key, name in keys.items()))
    if args.json:
        print(json.dumps([{"name": n, "public_key": k, "role": r} for n, k, r in rows]))
    else:
        for name, key, role in rows:
            print(f"{name:32} {key}  {role}")
    return 0
