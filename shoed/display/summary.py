"""One shoe of a journal summed up for a surveillance report: results, roads, counts, and where it came from.

Pure: it takes journal records already read and checked (shoed.journal.iter_records
proves every hash and link as it reads) and returns a ShoeSummary. Everything
in it is counted from the events the table journaled, nothing is inferred:
results from `coup.result` (less those voided after their result), voids from
`coup.void`, misdeals from `misdeal` with their `misdeal.corrected`, the
reconciliation from `shoe.closed` (absent while the shoe is still open).

A journal that verifies can still hold what its table never wrote: whoever can write an unkeyed
journal can seal it again (docs/journal.md). So every field shown is taken for what it is:
strings made one printable line of at most TEXT_MAX characters (the table and shoe ids too, as
`shoes_in` lists them), numbers kept only where they are ints, a result without a winner left out
and said in the notes; and the notes say what the journal's key proves (`key_notes`).
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field, replace

from typing import Any

from shoed.display.state import shown
from shoed.journal.recall import events_of
from shoed.rules.roads import WINNERS, Outcome
from shoed.table.results import results_from_events
from shoed.rules.stats import Tally, tally


class SummaryError(ValueError):
    """The journal does not hold the shoe asked for."""


@dataclass(frozen=True, slots=True)
class MisdealLine:
    coup: int | None
    id: int | None
    kind: str
    correctable: bool
    correction: str  # what the rules ask for
    corrected: str | None  # what was done (burn_card, return_card, enter_card), None if not corrected
    card: str | None  # the card in the misdeal, or the card entered by hand where it was unread
    utc: str | None = None  # when the misdeal was found
    corrected_by: str | None = None  # the key (its name) that sent the correction
    corrected_utc: str | None = None


@dataclass(frozen=True, slots=True)
class VoidLine:
    """A void: the coup, why, who voided it (the command key's name; None when a misdeal that
    cannot be corrected voided it) and when."""

    coup: int | None
    reason: str
    by: str | None
    utc: str | None

    @property
    def who(self) -> str:
        return self.by or "the table (misdeal)"


@dataclass(frozen=True, slots=True)
class Provenance:
    """Where in the journal the shoe's records are."""

    spans: tuple[tuple[int | None, int, int], ...]  # (file number, first and last record's jseq) per file
    records: int
    last_hash: str | None  # hash of the shoe's last record: compare with `shoed journal verify`

    def describe(self) -> str:
        """E.g. "file 1 record 6, file 2 records 3-569" (jseq counts lines within each file)."""
        parts = []
        for file_seq, first, last in self.spans:
            where = f"record {first}" if first == last else f"records {first}-{last}"
            parts.append(f"file {file_seq if file_seq is not None else '?'} {where}")
        return ", ".join(parts) or "no records"


@dataclass(frozen=True, slots=True)
class ShoeSummary:
    table: str
    shoe: str
    ruleset: str | None
    decks: int | None
    opened_utc: str | None
    closed_utc: str | None
    close_reason: str | None
    results: tuple[Outcome, ...]
    coups: int  # coups dealt: every coup with a result or a void
    voids: tuple[VoidLine, ...]
    misdeals: tuple[MisdealLine, ...]
    burned: int
    burn_first: str | None
    last_coup: int | None  # set by the cut card
    alarms: tuple[tuple[str, int], ...]  # alarms raised during the shoe: (name, times)
    reconciliation: dict | None
    last_odds: dict | None
    provenance: Provenance
    seq: tuple[int | None, int | None] = (None, None)  # first and last event seq of the shoe
    notes: tuple[str, ...] = field(default=())
    key: str | None = None  # how the journal's records are sealed: sha256, hmac-sha256, fss-hmac-sha256

    @property
    def tally(self) -> Tally:
        return tally(self.results)

    def counts(self) -> dict:
        """The figures of the report, by name (the HTML's data-stat attributes)."""
        t = self.tally
        return {
            "coups": self.coups, "results": t.coups, "banker": t.banker, "player": t.player, "tie": t.tie,
            "banker_pairs": t.banker_pairs, "player_pairs": t.player_pairs, "naturals": t.naturals,
            "voids": len(self.voids), "misdeals": len(self.misdeals),
            "misdeals_corrected": sum(m.corrected is not None for m in self.misdeals),
            "burned": self.burned,
        }


def _text(value: object) -> str | None:
    """A string of the journal as a report shows it (one printable line, cut); None stays None."""
    return None if value is None else shown(value if isinstance(value, str) else str(value))


def _int(value: object) -> int | None:
    return value if isinstance(value, int) and not isinstance(value, bool) else None


def _plain(value: object) -> Any:
    """A count of the excess: an int as it is, anything else as text."""
    return value if isinstance(value, int) or value is None else _text(value)


def _reconciliation(rec: object) -> dict | None:
    if rec is None:
        return None
    if not isinstance(rec, dict):
        return {"balanced": False, "unaccounted": _text(rec)}
    out = dict(rec)  # what is shown of it is made text where it is drawn (html._h, labels)
    excess = rec.get("excess")
    if isinstance(excess, dict):
        out["excess"] = {_text(k): _plain(v) for k, v in excess.items()}
    elif excess:
        out["excess"] = {_text(excess): "?"}
    return out


KEY_NOTES = {
    "sha256": "an unkeyed journal (sha256) is proved against accidents only: whoever can write its files can "
              "seal the chain again and the check cannot tell; a keyed or sealed journal, or the witness, can",
}


def key_notes(key: str | None) -> list[str]:
    """What `shoed journal verify` says the journal's key proves, where it is less than a reader may take."""
    if key is None:
        return ["the journal's key is not known here: what its check proves is not said"]
    return [KEY_NOTES[key]] if key in KEY_NOTES else []


def shoes_in(records) -> list[tuple[str, str, int]]:
    """(table, shoe, coups dealt: with a result or a void) of every shoe opened in the records, in order;
    the ids as they are shown (`_text`)."""
    return [(_text(table) or "", _text(shoe) or "", coups) for table, shoe, coups in _shoes(records)]


def _shoes(records) -> list[tuple[str, str, int]]:
    """As shoes_in, the ids as the journal holds them."""
    found: dict[tuple[str, str], set] = {}
    for record in records:
        if record.get("kind") != "step":
            continue
        for event in events_of(record):
            key = (str(event.get("table")), str(event.get("shoe")))
            if event.get("kind") == "shoe.opened":
                found.setdefault(key, set())
            elif event.get("kind") in ("coup.result", "coup.void") and key in found:
                found[key].add(event.get("coup"))
    return [(table, shoe, len(coups)) for (table, shoe), coups in found.items()]


def summarize(records, shoe: str | None = None, table: str | None = None) -> ShoeSummary:
    """The summary of one shoe (by default the last one opened) of the records."""
    records = list(records)
    shoes = [s for s in _shoes(records) if table is None or table in (s[0], _text(s[0]))]
    if not shoes:
        raise SummaryError("no shoe was opened in this journal" + (f" at table {table}" if table else ""))
    tables = sorted({_text(t) or "" for t, _, _ in shoes})
    if table is None and len(tables) > 1:
        raise SummaryError(f"journals of several tables here ({', '.join(tables)}): name one with --table")
    if shoe is None:
        table_id, shoe_id, _ = shoes[-1]
    else:
        match = [s for s in shoes if shoe in (s[1], _text(s[1]))]
        if not match:
            listed = ", ".join(f"{_text(s)} ({n} coups)" for _, s, n in shoes[-10:])
            raise SummaryError(f"no shoe {shoe} in this journal; its last shoes: {listed}")
        table_id, shoe_id, _ = match[-1]

    events: list[dict] = []
    spans: list[list] = []  # [file number, first jseq, last jseq]
    records_held, last_hash = 0, None
    file_seq = None
    keys: set[str | None] = set()
    for record in records:
        if record.get("kind") == "journal_file":
            file_seq = record.get("file_seq")
            if str(record.get("table")) == table_id:
                keys.add(record.get("alg") if isinstance(record.get("alg"), str) else None)
            continue
        if record.get("kind") != "step":
            continue
        mine = [e for e in events_of(record) if e.get("shoe") == shoe_id and e.get("table") == table_id]
        if not mine:
            continue
        events.extend(mine)
        if spans and spans[-1][0] == file_seq:
            spans[-1][2] = record.get("jseq")
        else:
            spans.append([file_seq, record.get("jseq"), record.get("jseq")])
        records_held, last_hash = records_held + 1, record.get("hash")
    # The weakest key of the table's files: an unkeyed file among keyed ones proves only what it does.
    key = None if None in keys or not keys else min(keys, key=lambda k: {"sha256": 0}.get(k or "", 1))
    summary = _summary(table_id, shoe_id, events,
                       Provenance(tuple(tuple(x) for x in spans), records_held, _text(last_hash)))
    return replace(summary, key=key, notes=summary.notes + tuple(key_notes(key)))


def _summary(table: str, shoe: str, events: list[dict], provenance: Provenance) -> ShoeSummary:
    events = [e for e in events if isinstance(e, dict)]
    notes = []
    unknown = [e for e in events if e.get("kind") == "coup.result" and str(e.get("winner")) not in WINNERS]
    if unknown:
        named = ", ".join(str(_text(e.get("coup"))) for e in unknown[:5]) + (", ..." if len(unknown) > 5 else "")
        notes.append(f"{len(unknown)} result(s) without a winner in the journal, not counted (coup {named})")
        left_out = {id(e) for e in unknown}
        events = [e for e in events if id(e) not in left_out]
    opened = next((e for e in events if e.get("kind") == "shoe.opened"), {})
    closed = next((e for e in reversed(events) if e.get("kind") == "shoe.closed"), None)
    corrected = {e.get("misdeal"): e for e in events if e.get("kind") == "misdeal.corrected"
                 and _int(e.get("misdeal")) is not None}
    misdeals = []
    for e in events:
        if e.get("kind") != "misdeal":
            continue
        detail: dict = e["misdeal"] if isinstance(e.get("misdeal"), dict) else {}
        done: dict = corrected.get(_int(detail.get("id"))) or {}
        misdeals.append(MisdealLine(
            coup=_int(e.get("coup")), id=_int(detail.get("id")), kind=str(_text(detail.get("kind"))),
            correctable=bool(detail.get("correctable")), correction=str(_text(detail.get("correction"))),
            corrected=_text(done.get("correction")), card=_text(detail.get("card") or done.get("card")),
            utc=_text(e.get("utc")), corrected_by=_text(done.get("by")), corrected_utc=_text(done.get("utc")),
        ))
    coups = {e.get("coup") for e in events if e.get("kind") in ("coup.result", "coup.void")}
    burns = [e for e in events if e.get("kind") == "shoe.burn"]
    cut = next((e for e in events if e.get("kind") == "shoe.cut_card"), None)
    raised = Counter(_text(e.get("alarm")) or "" for e in events if e.get("kind") == "alarm" and e.get("active"))
    odds = [e for e in events if e.get("kind") == "shoe.odds"]
    if closed is None:
        notes.append("the shoe is not closed in this journal: no reconciliation yet")
    seqs = [seq for e in events if (seq := _int(e.get("seq"))) is not None]
    return ShoeSummary(
        table=_text(table) or "",
        shoe=_text(shoe) or "",
        ruleset=_text(opened.get("ruleset")),
        decks=_int(opened.get("decks")),
        opened_utc=_text(opened.get("utc")),
        closed_utc=_text(closed.get("utc")) if closed else None,
        close_reason=_text(closed.get("reason")) if closed else None,
        results=results_from_events(events, shoe=shoe),
        coups=len(coups),
        voids=tuple(VoidLine(_int(e.get("coup")), _text(e.get("reason") or "") or "", _text(e.get("by")),
                             _text(e.get("utc")))
                    for e in events if e.get("kind") == "coup.void"),
        misdeals=tuple(misdeals),
        burned=len(burns),
        burn_first=next((_text(e.get("card")) for e in burns if e.get("exposed")), None),
        last_coup=_int(cut.get("last_coup")) if cut else None,
        alarms=tuple(sorted(raised.items())),
        reconciliation=_reconciliation(closed.get("reconciliation")) if closed else None,
        last_odds=odds[-1] if odds else None,
        provenance=provenance,
        seq=(seqs[0], seqs[-1]) if seqs else (None, None),
        notes=tuple(notes),
    )
