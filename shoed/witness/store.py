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
import sqlite3
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

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

_INSERT_EVENT = (
    "INSERT INTO witness_events (table_id, seq, kind, body, jfile, jseq, jhash, via, received_utc) "
    "VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?) ON CONFLICT DO NOTHING"
)
_INSERT_HEAD = (
    "INSERT INTO witness_heads (table_id, jfile, jseq, jhash, seq, source, received_utc) "
    "VALUES (?, ?, ?, ?, ?, ?, ?) ON CONFLICT DO NOTHING"
)

_encoder = msgspec.json.Encoder(order="sorted")
_decoder = msgspec.json.Decoder()


class WitnessStoreError(Exception):
    """The witness database cannot be opened or used: one line for the operator."""


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
        if not isinstance(file, int) or isinstance(file, bool) or file < 0:
            return None
        if not isinstance(jseq, int) or isinstance(jseq, bool) or jseq < 0:
            return None
        if not isinstance(digest, str) or not 0 < len(digest) <= 128:
            return None
        return cls(file, jseq, digest)


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


def utc_now() -> str:
    return datetime.now(UTC).isoformat(timespec="milliseconds").replace("+00:00", "Z")


def _sqlite_path(url: str) -> str:
    path = url[len("sqlite://"):]
    if not path:
        raise WitnessStoreError(f"{url}: give a path, e.g. sqlite:///var/lib/shoed/witness.db")
    return path


class WitnessStore:
    """A connection to the witness database; creates the schema on first use."""

    def __init__(self, url: str) -> None:
        self.url = url
        self._conn: Any  # a DB-API connection: sqlite3's or psycopg's
        if url.startswith("sqlite://"):
            self.kind = "sqlite"
            path = _sqlite_path(url)
            parent = Path(path).parent
            if not parent.is_dir():
                raise WitnessStoreError(f"{url}: the directory {parent} does not exist")
            try:
                self._conn = sqlite3.connect(path)
                # Durable like the journal: a head the witness has acknowledged to itself survives power loss.
                self._conn.execute("PRAGMA journal_mode=WAL")
                self._conn.execute("PRAGMA synchronous=FULL")
                self._conn.execute("PRAGMA busy_timeout=5000")
            except sqlite3.Error as exc:
                raise WitnessStoreError(f"cannot open {url}: {exc}") from None
            self._errors: tuple[type[BaseException], ...] = (sqlite3.Error,)
            self._param = "?"
        elif url.startswith(("postgresql://", "postgres://")):
            self.kind = "postgresql"
            try:
                import psycopg
            except ImportError:
                raise WitnessStoreError(
                    "a PostgreSQL witness needs psycopg: pip install 'shoed[witness]'"
                ) from None
            try:
                self._conn = psycopg.connect(url, connect_timeout=10)
            except psycopg.Error as exc:
                raise WitnessStoreError(f"cannot connect to {_redact(url)}: {_first_line(exc)}") from None
            self._errors = (psycopg.Error,)
            self._param = "%s"
        else:
            raise WitnessStoreError(
                f"{url!r} is not a witness database URL: sqlite:///PATH or postgresql://USER@HOST/DB"
            )
        self._create()

    # -- plumbing --------------------------------------------------------

    def _sql(self, statement: str) -> str:
        return statement if self._param == "?" else statement.replace("?", self._param)

    def _run(self, work):
        """Run `work(cursor)` in one transaction; WitnessStoreError on a database error."""
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
            raise WitnessStoreError(f"witness database {_redact(self.url)}: {_first_line(exc)}") from None

    def _create(self) -> None:
        def create(cur):
            for statement in SCHEMA:
                cur.execute(statement)
            cur.execute("SELECT version FROM witness_schema")
            rows = cur.fetchall()
            if not rows:
                cur.execute(self._sql("INSERT INTO witness_schema (version) VALUES (?)"), (SCHEMA_VERSION,))
            elif rows[0][0] != SCHEMA_VERSION:
                return rows[0][0]
            return None

        found = self._run(create)
        if found is not None:
            raise WitnessStoreError(f"{_redact(self.url)} holds witness schema {found}; this shoed writes {SCHEMA_VERSION}")

    # -- writing ---------------------------------------------------------

    def record(self, events: Iterable[SeenEvent], heads: Iterable[SeenHead]) -> None:
        """Keep events and heads in one transaction; what is already kept stays as it was."""
        event_rows = [
            (e.table, e.seq, e.kind, _encoder.encode(e.event).decode(),
             *((e.head.file, e.head.jseq, e.head.hash) if e.head else (None, None, None)), e.via, e.received_utc)
            for e in events
        ]
        head_rows = [(h.table, h.head.file, h.head.jseq, h.head.hash, h.seq, h.source, h.received_utc) for h in heads]
        if not event_rows and not head_rows:
            return

        def write(cur):
            if event_rows:
                cur.executemany(self._sql(_INSERT_EVENT), event_rows)
            if head_rows:
                cur.executemany(self._sql(_INSERT_HEAD), head_rows)

        self._run(write)

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


def _redact(url: str) -> str:
    """The URL without a password, for messages and logs."""
    scheme, sep, rest = url.partition("://")
    userinfo, at, host = rest.rpartition("@")
    if not at or ":" not in userinfo:
        return url
    return f"{scheme}{sep}{userinfo.split(':', 1)[0]}:***@{host}"


def describe(url: str) -> str:
    return _redact(url) if not url.startswith("sqlite://") else f"sqlite:{os.path.abspath(_sqlite_path(url))}"
