"""The witness's database: one schema, on SQLite (embedded) or PostgreSQL (a surveillance server).

A URL chooses it:

    sqlite:///var/lib/shoed/witness.db    an absolute path (everything after "sqlite://" is the path)
    sqlite://witness.db                   a path relative to the working directory
    postgresql://user@host:5432/surveillance   (also postgres://; any libpq connection URL)

The same statements run on both: plain types (TEXT, BIGINT), `?` parameters
(written `%s` for psycopg), and `INSERT ... ON CONFLICT DO NOTHING`, so that
recording an event or a head twice is harmless. An event's key is its table
and seq: the witness keeps what it saw first and never counts it twice. A
head's key is its table, file, jseq and hash: two different hashes at one
place in a table's journal are both kept (the journal was changed in between).
"""

from __future__ import annotations

import os
import re
import sqlite3
import urllib.parse
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, TypeGuard

import msgspec

SCHEMA_VERSION = 1

SCHEMA = (
    """CREATE TABLE IF NOT EXISTS witness_schema (
        version INTEGER NOT NULL
    )""",
    """CREATE TABLE IF NOT EXISTS witness_events (
        table_id TEXT NOT NULL,
        seq BIGINT NOT NULL,
        kind TEXT NOT NULL,
        body TEXT NOT NULL,
        jfile BIGINT,
        jseq BIGINT,
        jhash TEXT,
        via TEXT NOT NULL,
        received_utc TEXT NOT NULL,
        PRIMARY KEY (table_id, seq)
    )""",
    """CREATE TABLE IF NOT EXISTS witness_heads (
        table_id TEXT NOT NULL,
        jfile BIGINT NOT NULL,
        jseq BIGINT NOT NULL,
        jhash TEXT NOT NULL,
        seq BIGINT,
        source TEXT NOT NULL,
        received_utc TEXT NOT NULL,
        PRIMARY KEY (table_id, jfile, jseq, jhash)
    )""",
)

# Every column the witness reads and writes, asked of tables that exist already (another program's, or an
# older form of the witness's): a column missing is an error before the witness says it is ready.
_FORM = (
    "SELECT table_id, seq, kind, body, jfile, jseq, jhash, via, received_utc FROM witness_events WHERE 1 = 0",
    "SELECT table_id, jfile, jseq, jhash, seq, source, received_utc FROM witness_heads WHERE 1 = 0",
)

_INSERT_EVENT = (
    "INSERT INTO witness_events (table_id, seq, kind, body, jfile, jseq, jhash, via, received_utc) "
    "VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?) ON CONFLICT DO NOTHING"
)
_INSERT_HEAD = (
    "INSERT INTO witness_heads (table_id, jfile, jseq, jhash, seq, source, received_utc) "
    "VALUES (?, ?, ?, ?, ?, ?, ?) ON CONFLICT DO NOTHING"
)

# A journal record's hash as the chain writes it (SHA-256 or HMAC-SHA-256, hex): anything else a table
# publishes as its head is not kept (PostgreSQL refuses a NUL in text, and the witness must not stop for it).
_HASH = re.compile(r"[0-9a-f]{64}")
BIGINT_MAX = 2**63 - 1  # the largest number either database keeps in a BIGINT column
# PostgreSQL: a statement that waits longer than this on a lock, or runs longer, is an error (one line, exit 2)
# rather than a witness that hangs silently and ignores SIGTERM; the connection's keepalives find a server gone.
PG_LOCK_TIMEOUT_MS = 5_000
PG_STATEMENT_TIMEOUT_MS = 30_000

_encoder = msgspec.json.Encoder(order="sorted")
_decoder = msgspec.json.Decoder()


class WitnessStoreError(Exception):
    """The witness database cannot be opened or used: one line for the operator."""


class WitnessDataError(WitnessStoreError):
    """The database refused what was to be written (a value it cannot hold), not the connection."""


@dataclass(frozen=True, slots=True)
class Head:
    """A journal chain head as a table published it: the record at `jseq` of file `file` has `hash`."""

    file: int
    jseq: int
    hash: str

    @classmethod
    def from_wire(cls, value: object) -> Head | None:
        """The `journal` field of an event, heartbeat or snapshot; None when absent or malformed."""
        if not isinstance(value, dict):
            return None
        file, jseq, digest = value.get("file"), value.get("jseq"), value.get("hash")
        if not is_count(file) or not is_count(jseq):
            return None
        if not isinstance(digest, str) or not _HASH.fullmatch(digest):
            return None
        return cls(file, jseq, digest)


def is_count(value: object) -> TypeGuard[int]:
    """A number the database keeps as it is: an int from 0 to BIGINT_MAX, not a bool."""
    return isinstance(value, int) and not isinstance(value, bool) and 0 <= value <= BIGINT_MAX


@dataclass(frozen=True, slots=True)
class SeenHead:
    table: str
    head: Head
    seq: int | None
    source: str
    received_utc: str


@dataclass(frozen=True, slots=True)
class SeenEvent:
    table: str
    seq: int
    kind: str
    event: dict  # as received, without its `journal` field
    head: Head | None
    via: str
    received_utc: str


@dataclass(slots=True)
class Recorded:
    """What one `record` kept: events new to the database (a repeat is not counted), rows refused."""

    events: int = 0
    refused: int = 0


def utc_now() -> str:
    return datetime.now(UTC).isoformat(timespec="milliseconds").replace("+00:00", "Z")


def _sqlite_path(url: str) -> str:
    path = url[len("sqlite://"):]
    if not path:
        raise WitnessStoreError(f"{url}: give a path, e.g. sqlite:///var/lib/shoed/witness.db")
    return path


class WitnessStore:
    """A connection to the witness database; creates the schema on first use.

    `read_only` (what `journal verify --witness` opens): nothing is created or written, a SQLite file
    must exist, a PostgreSQL session is read-only (a SELECT-only account is enough), and a database
    without the witness's schema is an error rather than an empty witness that agrees with anything."""

    def __init__(self, url: str, *, read_only: bool = False) -> None:
        self.url = url
        self.read_only = read_only
        self._conn: Any  # a DB-API connection: sqlite3's or psycopg's
        if url.startswith("sqlite://"):
            self.kind = "sqlite"
            path = _sqlite_path(url)
            parent = Path(path).parent
            if not parent.is_dir():
                raise WitnessStoreError(f"{url}: the directory {parent} does not exist")
            if read_only and not Path(path).is_file():
                raise WitnessStoreError(f"{url}: no witness database there ({os.path.abspath(path)} is not a file)")
            try:
                if read_only:
                    self._conn = sqlite3.connect(f"file:{urllib.parse.quote(os.path.abspath(path))}?mode=ro",
                                                 uri=True)
                else:
                    self._conn = sqlite3.connect(path)
                    # Durable like the journal: a head the witness has acknowledged to itself survives power loss.
                    self._conn.execute("PRAGMA journal_mode=WAL")
                    self._conn.execute("PRAGMA synchronous=FULL")
                self._conn.execute("PRAGMA busy_timeout=5000")
            except sqlite3.Error as exc:
                raise WitnessStoreError(f"cannot open {url}: {exc}") from None
            self._errors: tuple[type[BaseException], ...] = (sqlite3.Error, OverflowError)
            self._data_errors: tuple[type[BaseException], ...] = (
                sqlite3.DataError, sqlite3.IntegrityError, OverflowError)
            self._param = "?"
        elif url.startswith(("postgresql://", "postgres://")):
            self.kind = "postgresql"
            try:
                import psycopg
            except ImportError:
                raise WitnessStoreError(
                    "a PostgreSQL witness needs psycopg: pip install 'shoed[witness]'"
                ) from None
            options = f"-c lock_timeout={PG_LOCK_TIMEOUT_MS} -c statement_timeout={PG_STATEMENT_TIMEOUT_MS}"
            if read_only:
                options += " -c default_transaction_read_only=on"
            try:
                self._conn = psycopg.connect(url, connect_timeout=10, options=options, keepalives=1,
                                             keepalives_idle=10, keepalives_interval=5, keepalives_count=3)
            except psycopg.Error as exc:
                raise WitnessStoreError(f"cannot connect to {_redact(url)}: {_redact(_first_line(exc))}") from None
            self._errors = (psycopg.Error,)
            self._data_errors = (psycopg.DataError, psycopg.IntegrityError)
            self._param = "%s"
        else:
            raise WitnessStoreError(
                f"{_redact(url)!r} is not a witness database URL: sqlite:///PATH or postgresql://USER@HOST/DB"
            )
        try:
            self._schema()
        except WitnessStoreError:
            self.close()
            raise

    # -- plumbing --------------------------------------------------------

    def _sql(self, statement: str) -> str:
        return statement if self._param == "?" else statement.replace("?", self._param)

    def _run(self, work):
        """Run `work(cursor)` in one transaction; WitnessStoreError on a database error
        (WitnessDataError when the database refused a value)."""
        try:
            cur = self._conn.cursor()
            try:
                result = work(cur)
            finally:
                cur.close()
            self._conn.commit()
            return result
        except self._errors as exc:
            try:
                self._conn.rollback()
            except self._errors:
                pass
            error = WitnessDataError if isinstance(exc, self._data_errors) else WitnessStoreError
            raise error(f"witness database {_redact(self.url)}: {_first_line(exc)}") from None

    def _schema(self) -> None:
        """Create the schema (unless read-only), then check that the tables are the witness's own, of this
        version: tables of another form are refused before anything is written or read."""
        if not self.read_only:
            def create(cur):
                for statement in SCHEMA:
                    cur.execute(statement)

            self._run(create)

        def check(cur):
            for statement in _FORM:
                cur.execute(statement)
                cur.fetchall()
            cur.execute("SELECT version FROM witness_schema")
            return [r[0] for r in cur.fetchall()]

        try:
            versions = self._run(check)
        except WitnessStoreError as exc:
            raise WitnessStoreError(f"{_redact(self.url)} does not hold the witness's schema "
                                    f"({str(exc).rpartition(': ')[2]})") from None
        if not versions:
            if self.read_only:
                raise WitnessStoreError(f"{_redact(self.url)} does not hold the witness's schema (no version)")
            self._run(lambda cur: cur.execute(self._sql("INSERT INTO witness_schema (version) VALUES (?)"),
                                              (SCHEMA_VERSION,)))
        elif versions[0] != SCHEMA_VERSION:
            raise WitnessStoreError(
                f"{_redact(self.url)} holds witness schema {versions[0]}; this shoed writes {SCHEMA_VERSION}")

    # -- writing ---------------------------------------------------------

    def record(self, events: Iterable[SeenEvent], heads: Iterable[SeenHead]) -> Recorded:
        """Keep events and heads in one transaction; what is already kept stays as it was. Should the
        database refuse a value, each row is written on its own and only those it refuses are left out
        (counted in `refused`): one table's bad message never costs another's, nor stops the witness."""
        event_rows = [
            (e.table, e.seq, e.kind, _encoder.encode(e.event).decode(),
             *((e.head.file, e.head.jseq, e.head.hash) if e.head else (None, None, None)), e.via, e.received_utc)
            for e in events
        ]
        head_rows = [(h.table, h.head.file, h.head.jseq, h.head.hash, h.seq, h.source, h.received_utc) for h in heads]
        if not event_rows and not head_rows:
            return Recorded()

        def write(cur):
            kept = 0
            if event_rows:
                cur.executemany(self._sql(_INSERT_EVENT), event_rows)
                kept = max(0, cur.rowcount)
            if head_rows:
                cur.executemany(self._sql(_INSERT_HEAD), head_rows)
            return kept

        try:
            return Recorded(self._run(write))
        except WitnessDataError:
            pass
        done = Recorded()
        for statement, rows in ((_INSERT_EVENT, event_rows), (_INSERT_HEAD, head_rows)):
            sql = self._sql(statement)
            for row in rows:
                try:
                    kept = self._run(lambda cur, sql=sql, row=row: cur.execute(sql, row).rowcount)
                except WitnessDataError:
                    done.refused += 1
                    continue
                if statement is _INSERT_EVENT:
                    done.events += max(0, kept or 0)
        return done

    # -- reading ---------------------------------------------------------

    def _query(self, statement: str, params: tuple = ()) -> list[tuple]:
        def query(cur):
            cur.execute(self._sql(statement), params)
            return cur.fetchall()

        return self._run(query)

    def tables(self) -> list[str]:
        rows = self._query("SELECT table_id FROM witness_heads UNION SELECT table_id FROM witness_events")
        return sorted(r[0] for r in rows)

    def last_seq(self, table: str) -> int | None:
        """The highest seq kept for a table: where a restarted witness resumes."""
        return self._query("SELECT MAX(seq) FROM witness_events WHERE table_id = ?", (table,))[0][0]

    def resume_seq(self, table: str) -> int | None:
        """Where a restarted witness resumes: the highest seq it accounted for, an event kept or a head
        seen at that seq (a snapshot it joined at, or one it took when events could not be fetched)."""
        rows = self._query("SELECT MAX(seq) FROM witness_events WHERE table_id = ? "
                           "UNION ALL SELECT MAX(seq) FROM witness_heads WHERE table_id = ?", (table, table))
        found = [r[0] for r in rows if r[0] is not None]
        return max(found) if found else None

    def count_events(self, table: str) -> int:
        return self._query("SELECT COUNT(*) FROM witness_events WHERE table_id = ?", (table,))[0][0]

    def head_files(self, table: str) -> dict[int, int]:
        """The journal files the witness saw heads of, each with how many heads."""
        rows = self._query("SELECT jfile, COUNT(*) FROM witness_heads WHERE table_id = ? GROUP BY jfile", (table,))
        return {f: n for f, n in rows}

    def heads(self, table: str, file: int | None = None) -> list[SeenHead]:
        """A table's heads (of one journal file, if given) in journal order."""
        where, params = ("AND jfile = ? ", (table, file)) if file is not None else ("", (table,))
        rows = self._query(
            "SELECT jfile, jseq, jhash, seq, source, received_utc FROM witness_heads WHERE table_id = ? "
            f"{where}ORDER BY jfile, jseq, received_utc", params)
        return [SeenHead(table, Head(f, j, h), s, src, utc) for f, j, h, s, src, utc in rows]

    def events(self, table: str, first: int = 0, last: int | None = None, batch: int = 5000) -> Iterator[SeenEvent]:
        """A table's events with first <= seq <= last in seq order, read in batches (a surveillance
        database may hold years)."""
        after = first - 1
        last = 2**63 - 1 if last is None else last
        while True:
            rows = self._query(
                "SELECT seq, kind, body, jfile, jseq, jhash, via, received_utc FROM witness_events "
                f"WHERE table_id = ? AND seq > ? AND seq <= ? ORDER BY seq LIMIT {int(batch)}", (table, after, last))
            for seq, kind, body, jfile, jseq, jhash, via, utc in rows:
                head = Head(jfile, jseq, jhash) if jfile is not None else None
                yield SeenEvent(table, seq, kind, _decoder.decode(body), head, via, utc)
            if len(rows) < batch:
                return
            after = rows[-1][0]

    def seqs(self, table: str, batch: int = 50_000) -> Iterator[int]:
        """A table's event seqs in order, without the events."""
        after = -1
        while True:
            rows = self._query(
                f"SELECT seq FROM witness_events WHERE table_id = ? AND seq > ? ORDER BY seq LIMIT {int(batch)}",
                (table, after))
            yield from (r[0] for r in rows)
            if len(rows) < batch:
                return
            after = rows[-1][0]

    def close(self) -> None:
        try:
            self._conn.close()
        except self._errors:
            pass

    def __enter__(self) -> WitnessStore:
        return self

    def __exit__(self, *exc) -> None:
        self.close()


def _first_line(exc: BaseException) -> str:
    text = str(exc).strip()
    return text.splitlines()[0] if text else type(exc).__name__


_PASSWORD = re.compile(r"(password\s*=\s*)('(?:[^'\\]|\\.)*'|[^&\s]*)", re.IGNORECASE)


def _redact(text: str) -> str:
    """A URL (or a message quoting one) without its password, wherever it is written: `user:PASSWORD@`,
    `?password=...` in the query, or `password=...` in a keyword/value string."""
    text = _PASSWORD.sub(r"\1***", text)
    scheme, sep, rest = text.partition("://")
    if not sep:
        return text
    authority, slash, path = rest.partition("/")
    userinfo, at, host = authority.rpartition("@")
    if not at or ":" not in userinfo:
        return text
    return f"{scheme}{sep}{userinfo.split(':', 1)[0]}:***@{host}{slash}{path}"


def describe(url: str) -> str:
    return _redact(url) if not url.startswith("sqlite://") else f"sqlite:{os.path.abspath(_sqlite_path(url))}"
