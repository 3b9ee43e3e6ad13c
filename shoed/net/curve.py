"""CURVE security for shoed's sockets: key files, the allow-list and the ZAP authenticator.

A CURVE server socket with no ZAP handler lets in any client that knows the
server's public key (table-game-standards item 15). So the server side here is
one object, `ServerCurve`, that loads the server's secret key and the
allow-lists, starts a ZAP handler (`shoed.net.zap`, a thread of its own) on the
context, and only then configures sockets; it also sets ZMQ_ZAP_ENFORCE_DOMAIN on each of them, so if
the authenticator ever stops, clients are refused instead of waved through.

Key files are the ZeroMQ certificate format written by
`zmq.auth.create_certificates`: `NAME.key` holds the public key, and
`NAME.key_secret` both keys. An allow-list is a directory of public `.key`
files; a client's name is its file's stem, so the journal can say
"void by pit-boss-2 (key ...)".

Allow-lists are per ZAP domain: the daemon may let displays read events
(domain "events") while only the dealer console and pit may send commands
(domain "commands"). One directory for everything is the simple case.

A key on an allow-list carries a role in its file's metadata section
(`role = pit`, written by `shoed keys allow --role`): dealer, pit,
surveillance or display. A key file without a role is a dealer's
(docs/stream-integrity.md says which commands need which role). A display
board's key has the display role: it reads the display endpoints and may ask
for `status` (the displays' view), and the command endpoint refuses it every
command that changes the table.

An allow-list is refused whole when its directory or one of its key files may
be written by group or others (anyone who can write there could add a key of
the pit's role), and when one public key is listed in two files (which file's
name and role would count is an accident of ordering).
"""

from __future__ import annotations

import logging
import os
import re
import stat
import tempfile
import threading
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path

import zmq
import zmq.auth
from zmq.utils import z85

from shoed.files import KEY_FILE_MAX, fsync_folder, read_regular, what_is_at
from shoed.table.events import DEFAULT_ROLE, ROLES, SEES_ALL  # the schema owns the vocabulary of roles
from shoed.net.sockets import Closing
from shoed.net.limits import RefusalLog
from shoed.net.zap import ZapHandler

DEFAULT_DOMAIN = "shoed"
# Roles that may read but change nothing: the command endpoint answers them read-only commands only.
READ_ONLY_ROLES: tuple[str, ...] = ("display",)
# The surveillance endpoints' domain: the daemon's allow-list, its keys of the roles that see all (SEES_ALL: a dealer's
# console or a display board's key on the list is refused there: those streams carry face-down cards).
SURVEILLANCE_DOMAIN = "surveillance"

_NAME_RE = re.compile(r"[A-Za-z0-9][A-Za-z0-9._-]{0,63}")

log = logging.getLogger("shoed.net.curve")


class CurveError(Exception):
    """A key file or allow-list that cannot be used as it is."""


def _z85_key(key: bytes | str, what: str) -> bytes:
    if isinstance(key, str):
        key = key.encode("ascii", "replace")
    if len(key) != 40:
        raise CurveError(f"{what} must be a 40-character Z85 CURVE key, got {len(key)} characters")
    try:
        z85.decode(key)
    except (KeyError, ValueError):
        raise CurveError(f"{what} is not valid Z85") from None
    return key


def _certificate(path: str | os.PathLike, what: str = "") -> tuple[bytes, bytes | None]:
    """(public, secret or None) from a ZeroMQ certificate file, as pyzmq's `load_certificate` reads
    one, but never waiting on it: a FIFO or device given as a key (in an allow-list folder too) is
    refused, and a file past KEY_FILE_MAX (shoed.files.read_regular)."""
    try:
        data = read_regular(path, KEY_FILE_MAX)
    except OSError as exc:
        raise CurveError(f"{what}{path}: {exc.strerror or exc}") from None
    public = secret = None
    for line in data.splitlines():
        line = line.strip()
        if line.startswith(b"#"):
            continue
        if line.startswith(b"public-key") and public is None:
            public = line.split(b"=", 1)[-1].strip(b" \t'\"")
        elif line.startswith(b"secret-key") and secret is None:
            secret = line.split(b"=", 1)[-1].strip(b" \t'\"")
    if public is None:
        raise CurveError(f"{what}{path}: holds no public key (no public-key = line)")
    return public, secret


def load_public_key(path: str | os.PathLike) -> bytes:
    """The Z85 public key in a `.key` (or `.key_secret`) file."""
    public, _ = _certificate(path)
    return _z85_key(public, f"public key in {path}")


def private_file_problem(path: str | os.PathLike) -> str | None:
    """What makes a secret file not private to its owner (a group or other permission bit: the
    server's secret key, a shuffler's order key, the journal's secret), in words; None if it is.
    A systemd credential (/run/credentials/..., mode 0400) is private."""
    return _mode_problem(path, stat.S_IRWXG | stat.S_IRWXO, "readable or writable by others", "chmod 600 it")


def writable_by_others(path: str | os.PathLike) -> str | None:
    """What lets others than the owner change a file or directory (group or other write), in
    words; None if nothing does."""
    return _mode_problem(path, stat.S_IWGRP | stat.S_IWOTH, "writable by others", "chmod go-w it")


def _mode_problem(path: str | os.PathLike, bits: int, what: str, remedy: str) -> str | None:
    """`path` has a permission bit of `bits`: the problem in words (with its mode and the remedy)."""
    try:
        mode = os.stat(path).st_mode
    except OSError as exc:
        return f"{path}: {exc.strerror or exc}"
    if mode & bits:
        return f"{path} is {what} (mode {stat.S_IMODE(mode):o}); {remedy}"
    return None


def load_key_pair(path: str | os.PathLike) -> tuple[bytes, bytes]:
    """(public, secret) from a `.key_secret` file, which must be private to its owner."""
    path = Path(path)
    public, secret = _certificate(path)
    if secret is None:
        raise CurveError(f"{path} holds no secret key (is it the public .key file?)")
    problem = private_file_problem(path)
    if problem is not None:
        raise CurveError(problem)
    return _z85_key(public, f"public key in {path}"), _z85_key(secret, f"secret key in {path}")


def load_allow_list(directory: str | os.PathLike) -> dict[bytes, str]:
    """Public key -> client name for every `*.key` file in the directory.

    Unlike pyzmq's own loader this fails loudly: a file that is not a key, a
    secret key file dropped into the allow-list by mistake, a directory or key
    file that group or others may write, or one key in two files, is an error.
    """
    directory = Path(directory)
    try:
        if what_is_at(directory) != "folder":
            raise CurveError(f"allow-list directory {directory} does not exist")
        names = sorted(name for name in os.listdir(directory) if name.endswith(".key"))
    except OSError as exc:  # a folder on the way this user may not enter, or this one it may not list
        raise CurveError(f"allow-list directory {directory}: cannot read it ({exc.strerror or exc})") from None
    problem = writable_by_others(directory)
    if problem is not None:
        raise CurveError(f"allow-list directory {problem}: anyone who can write there could add a key")
    keys: dict[bytes, str] = {}
    for path in (directory / name for name in names):
        public, secret = _certificate(path, "allow-list ")
        if secret is not None:
            raise CurveError(f"allow-list {path} contains a secret key; only public .key files belong there")
        problem = writable_by_others(path)
        if problem is not None:
            raise CurveError(f"allow-list {problem}")
        key = _z85_key(public, f"public key in {path}")
        if key in keys:
            raise CurveError(f"allow-list: the same public key is in {directory / keys[key]}.key and {path}; "
                             "remove one of them")
        keys[key] = path.stem
    return keys


def key_role(path: str | os.PathLike) -> str:
    """The role in a key file's metadata section (`role = pit`); DEFAULT_ROLE when it names none."""
    return named_role(path) or DEFAULT_ROLE


def named_role(path: str | os.PathLike) -> str | None:
    """The role a key file's metadata section names (`role = pit`); None when it names none."""
    try:
        text = read_regular(path, KEY_FILE_MAX).decode("utf-8")
    except OSError as exc:
        raise CurveError(f"{path}: {exc.strerror or exc}") from None
    except UnicodeDecodeError as exc:
        raise CurveError(f"{path}: {exc}") from None
    section = None
    for line in text.splitlines():
        if not line.strip() or line.lstrip().startswith("#"):
            continue
        if not line[0].isspace():
            section = line.strip()
            continue
        name, sep, value = line.partition("=")
        if section == "metadata" and sep and name.strip() == "role":
            role = value.strip().strip('"')
            if role not in ROLES:
                raise CurveError(f"{path}: role {role!r} is not one of {', '.join(ROLES)}")
            return role
    return None


def with_role(text: str, role: str) -> str:
    """A public key file's text with its metadata naming `role` (any role it named before replaced)."""
    if role not in ROLES:
        raise CurveError(f"role must be one of {', '.join(ROLES)}, not {role!r}")
    out, section, placed = [], None, False
    for line in text.splitlines():
        if line and not line[0].isspace() and not line.startswith("#"):
            if section == "metadata" and not placed:
                out.append(f"    role = {role}")
                placed = True
            section = line.strip()
            if section == "curve" and not placed:
                out += ["metadata", f"    role = {role}"]
                placed = True
        elif section == "metadata" and line.partition("=")[0].strip() == "role":
            continue
        out.append(line)
    if not placed:
        raise CurveError("not a key file: it has no curve section")
    return "\n".join(out) + "\n"


def load_roles(directory: str | os.PathLike, keys: Mapping[bytes, str] | None = None) -> dict[bytes, str]:
    """Public key -> role for every `*.key` file on an allow-list; `keys`: the list as
    `load_allow_list` read it (read again where not given)."""
    listed = load_allow_list(directory) if keys is None else keys
    return {key: key_role(Path(directory) / f"{name}.key") for key, name in listed.items()}


def is_key_name(name: str) -> bool:
    """A key's name: a file in its directory (letters, digits, '.', '_' or '-', no extension), never a
    path out of it."""
    return bool(_NAME_RE.fullmatch(name)) and not name.endswith((".key", ".key_secret"))


def create_key_pair(directory: str | os.PathLike, name: str) -> tuple[Path, Path, str]:
    """Write `NAME.key` (public, mode 0644) and `NAME.key_secret` (mode 0600).

    The files are made in a private temporary directory and linked into
    place, so the secret key is never readable by others, not even for a
    moment, and an existing key pair is never overwritten.
    Returns (public file, secret file, public key).
    """
    if not is_key_name(name):
        raise CurveError(f"key name must be letters, digits, '.', '_' or '-' (no extension), not {name!r}")
    directory = Path(directory)
    try:
        directory.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise CurveError(f"cannot create {directory}: {exc}") from None
    public_path, secret_path = directory / f"{name}.key", directory / f"{name}.key_secret"
    for path in (public_path, secret_path):
        try:
            there = what_is_at(path) is not None
        except OSError as exc:
            raise CurveError(f"cannot look for {path}: {exc.strerror or exc}") from None
        if there:
            raise CurveError(f"{path} already exists; not overwriting a key")
    try:
        with tempfile.TemporaryDirectory(dir=directory, prefix=".keys-") as tmp:
            made_public, made_secret = (Path(p) for p in zmq.auth.create_certificates(tmp, name))
            os.chmod(made_secret, 0o600)
            os.chmod(made_public, 0o644)
            for src in (made_public, made_secret):
                with open(src, "rb") as f:
                    os.fsync(f.fileno())
            os.link(made_secret, secret_path)
            try:
                os.link(made_public, public_path)
            except OSError:
                secret_path.unlink()
                raise
        fsync_folder(directory)
    except FileExistsError as exc:
        raise CurveError(f"{exc.filename} already exists; not overwriting a key") from None
    except OSError as exc:
        raise CurveError(f"cannot write keys in {directory}: {exc}") from None
    return public_path, secret_path, load_public_key(public_path).decode("ascii")


class _AllowList:
    """The ZAP credentials provider: is this key on the domain's allow-list?

    Called from the authenticator's thread; lookups read a dict that `reload`
    replaces whole, so no lock is needed for them.
    """

    def __init__(self, keys: dict[bytes, str], roles: dict[bytes, str] | None = None) -> None:
        self.keys = keys
        self.roles = roles or {}
        # One summary line per interval, not one per refused handshake (a flood would be a log flood).
        self.refusals = RefusalLog(log, "CURVE clients refused")

    def callback(self, domain: str, key: bytes) -> bool:
        allowed = key in self.keys
        if not allowed:
            self.refusals.refused(f"domain {domain}", key.decode("ascii", "replace"))
        return allowed


@dataclass(frozen=True)
class ClientCurve:
    """A client's key pair and the server's public key, all Z85."""

    public_key: bytes
    secret_key: bytes
    server_key: bytes

    def __post_init__(self) -> None:
        object.__setattr__(self, "public_key", _z85_key(self.public_key, "client public key"))
        object.__setattr__(self, "secret_key", _z85_key(self.secret_key, "client secret key"))
        object.__setattr__(self, "server_key", _z85_key(self.server_key, "server public key"))

    @classmethod
    def of(cls, public_key: bytes | str, secret_key: bytes | str, server_key: bytes | str) -> ClientCurve:
        """From Z85 keys given as bytes or text."""
        return cls(_z85_key(public_key, "client public key"), _z85_key(secret_key, "client secret key"),
                   _z85_key(server_key, "server public key"))

    @classmethod
    def from_files(cls, client_secret_file: str | os.PathLike, server_public_file: str | os.PathLike) -> ClientCurve:
        public, secret = load_key_pair(client_secret_file)
        return cls(public, secret, load_public_key(server_public_file))

    def apply(self, socket: zmq.Socket) -> None:
        """Configure a socket before it connects."""
        socket.curve_publickey = self.public_key
        socket.curve_secretkey = self.secret_key
        socket.curve_serverkey = self.server_key


def user_id(frame: zmq.Frame) -> str | None:
    """The CURVE key (Z85) the ZAP handler authenticated a message's connection with (pyzmq's
    authenticator sets the User-Id to the client's public key); None without one."""
    try:
        key = frame.get("User-Id")
    except zmq.ZMQError:
        return None
    return key if isinstance(key, str) and len(key) == 40 else None


class ServerCurve(Closing):
    """The server's key pair plus a running ZAP authenticator with allow-lists.

    `allow` is one directory (domain "shoed") or a mapping of ZAP domain to
    directory. A ZAP handler binds its context's single ZAP endpoint, and
    sockets of another context would not reach it: the handler starts on
    `context` (given no context, on that of the first socket passed to
    `apply()`, still before that socket binds), and `attach()` starts one on
    each further context whose sockets this server's keys secure (the daemon
    gives each event stream a context of its own).
    """

    def __init__(
        self,
        context: zmq.Context | None,
        server_secret_file: str | os.PathLike,
        allow: str | os.PathLike | Mapping[str, str | os.PathLike],
        roles: Mapping[str, tuple[str, ...]] | None = None,
    ) -> None:
        self.public_key, self._secret_key = load_key_pair(server_secret_file)
        if isinstance(allow, Mapping):
            self._dirs = {str(domain): Path(d) for domain, d in allow.items()}
        else:
            self._dirs = {DEFAULT_DOMAIN: Path(allow)}
        if not self._dirs:
            raise CurveError("no allow-list given")
        for domain in self._dirs:
            if not _NAME_RE.fullmatch(domain):
                raise CurveError(f"bad ZAP domain name {domain!r}")
        self._roles = dict(roles or {})  # domain -> the roles its keys must have (every role where absent)
        self._providers = {domain: _AllowList(keys, roles) for domain, (keys, roles) in self._read().items()}
        for domain, provider in self._providers.items():
            log.info("CURVE allow-list %s: %d keys from %s", domain, len(provider.keys), self._dirs[domain])
        self._lock = threading.Lock()
        self.context: zmq.Context | None = None  # the first context served
        self._handlers: list[ZapHandler] = []
        self._closed = False
        if context is not None:
            self._start(context)

    def _read(self) -> dict[str, tuple[dict[bytes, str], dict[bytes, str]]]:
        """Each domain's (keys, roles): every allow-list directory read once (domains may share one),
        a domain's keys kept to its roles."""
        lists = {}
        for directory in set(self._dirs.values()):
            keys = load_allow_list(directory)
            lists[directory] = keys, load_roles(directory, keys)
        read = {}
        for domain, directory in self._dirs.items():
            keys, roles = lists[directory]
            admitted = self._roles.get(domain)
            if admitted is not None:
                keys = {k: name for k, name in keys.items() if roles.get(k, DEFAULT_ROLE) in admitted}
            read[domain] = keys, roles
        return read

    @classmethod
    def from_key_dir(cls, key_dir: str | os.PathLike, context: zmq.Context | None = None) -> ServerCurve:
        """The daemon's layout: `KEY_DIR/server.key_secret` and the allow-list `KEY_DIR/clients/`.

        Made with `shoed keys new server --dir KEY_DIR`; clients are allowed
        with `shoed keys allow CLIENT.key --dir KEY_DIR/clients`.
        """
        key_dir = Path(key_dir)
        secret = key_dir / "server.key_secret"
        try:
            missing = what_is_at(secret) is None
        except OSError as exc:
            raise CurveError(f"cannot read the server key {secret}: {exc.strerror or exc}") from None
        if missing:
            raise CurveError(f"no server key {secret}: make one with `shoed keys new server --dir {key_dir}`")
        clients = key_dir / "clients"
        return cls(context, secret, {DEFAULT_DOMAIN: clients, SURVEILLANCE_DOMAIN: clients},
                   roles={SURVEILLANCE_DOMAIN: SEES_ALL})

    def _start(self, context: zmq.Context) -> None:
        callbacks = {domain: provider.callback for domain, provider in self._providers.items()}
        try:
            handler = ZapHandler(context, callbacks)
        except zmq.ZMQError as exc:
            raise CurveError(f"cannot start the ZAP authenticator (one already runs on this context?): {exc}") from None
        self._handlers.append(handler)
        if self.context is None:
            self.context = context

    def _serves(self, context: zmq.Context) -> bool:
        return any(h.context is context for h in self._handlers)

    def attach(self, context: zmq.Context) -> None:
        """Serve the handshakes of another context's sockets too (a ZAP handler of its own)."""
        if self._closed:
            raise CurveError("the ZAP authenticator is closed")
        if not self._serves(context):
            self._start(context)

    @property
    def domains(self) -> tuple[str, ...]:
        return tuple(self._dirs)

    def running(self) -> bool:
        return not self._closed and bool(self._handlers) and all(h.is_alive() for h in self._handlers)

    def apply(self, socket: zmq.Socket, domain: str = DEFAULT_DOMAIN) -> None:
        """Make a socket a CURVE server checked against `domain`'s allow-list.

        Call before bind. Refuses if the authenticator is not running, since
        then the allow-list would not be consulted.
        """
        if domain not in self._providers:
            raise CurveError(f"no allow-list for ZAP domain {domain!r} (have {', '.join(self._dirs)})")
        if not self._handlers and not self._closed:
            self._start(socket.context)
        if not self.running():
            raise CurveError("the ZAP authenticator is not running; refusing to configure a CURVE socket")
        if not self._serves(socket.context):
            raise CurveError("socket belongs to another ZeroMQ context than the authenticator")
        socket.zap_domain = domain.encode()
        socket.setsockopt(zmq.ZAP_ENFORCE_DOMAIN, 1)
        socket.curve_server = True
        socket.curve_publickey = self.public_key
        socket.curve_secretkey = self._secret_key

    def client_name(self, key: str | bytes, domain: str = DEFAULT_DOMAIN) -> str | None:
        """The allow-list file stem of a client key, or None if it is not (or no longer) listed."""
        if isinstance(key, str):
            key = key.encode("ascii", "replace")
        provider = self._providers.get(domain)
        return provider.keys.get(key) if provider else None

    def allowed(self, key: str | bytes, domain: str = DEFAULT_DOMAIN) -> bool:
        """Whether a client key is on the domain's allow-list now (after the last reload)."""
        return self.client_name(key, domain) is not None

    def client_role(self, key: str | bytes, domain: str = DEFAULT_DOMAIN) -> str | None:
        """The role of an allowed client key (DEFAULT_ROLE when its file names none); None if not listed."""
        if isinstance(key, str):
            key = key.encode("ascii", "replace")
        provider = self._providers.get(domain)
        if provider is None or key not in provider.keys:
            return None
        return provider.roles.get(key, DEFAULT_ROLE)

    def reload(self) -> dict[str, int]:
        """Re-read every allow-list (after adding or removing `.key` files).

        All directories are read before any is swapped in, so a bad file
        leaves the old lists in force. Connections already authenticated stay
        up; a removed key is refused from its next handshake on.
        """
        with self._lock:
            fresh = self._read()
            for domain, (keys, roles) in fresh.items():
                # Roles first: a key is never seen listed without its role.
                self._providers[domain].roles = roles
                self._providers[domain].keys = keys
        return {domain: len(keys) for domain, (keys, _) in fresh.items()}

    def listed(self) -> dict[str, frozenset]:
        """The keys on each domain's allow-list in force."""
        with self._lock:
            return {domain: frozenset(provider.keys) for domain, provider in self._providers.items()}

    def close(self) -> None:
        self._closed = True
        for handler in self._handlers:
            handler.stop()
        self._handlers = []
