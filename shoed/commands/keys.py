"""`shoed keys`: CURVE key pairs for the daemon and its clients, and the allow-list.

    shoed keys new NAME --dir DIR      make DIR/NAME.key (public) and DIR/NAME.key_secret (0600)
    shoed keys allow FILE --dir DIR    put a client's public key file on an allow-list
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
    import shutil
    from pathlib import Path

    from shoed.cli import CommandError
    from shoed.net.curve import CurveError, load_allow_list, load_public_key

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
    except CurveError as exc:
        raise CommandError(str(exc)) from None
    if public_key in existing:
        print(f"{public_key.decode()} is already allowed as {existing[public_key]}")
        return 0
    dest = Path(args.dir) / f"{name}.key"
    if dest.exists():
        raise CommandError(f"{dest} already exists with another key; choose --name")
    tmp = dest.with_name(f".{dest.name}.tmp")
    try:
        shutil.copyfile(src, tmp)
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
    print(f"allowed {name}: {public_key.decode()}  ({dest}); reload the daemon (systemctl reload shoed, or kill -HUP) to take it into use")
    return 0


def run_list(args) -> int:
    from shoed.cli import CommandError
    from shoed.net.curve import CurveError, load_allow_list

    try:
        keys = load_allow_list(args.dir)
    except CurveError as exc:
        raise CommandError(str(exc)) from None
    rows = sorted(((name, key.decode()) for key, name in keys.items()))
    if args.json:
        print(json.dumps([{"name": n, "public_key": k} for n, k in rows]))
    else:
        for name, key in rows:
            print(f"{name:32} {key}")
    return 0
