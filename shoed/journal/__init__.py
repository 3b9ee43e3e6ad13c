"""The journal: append-only, hash-chained, fsync'd JSON Lines, one file per shoe.

It lets surveillance replay any shoe and prove what happened
(table-game-standards.md items 2, 3, 5, 6, 18, 19 and 20):

- `Journal` writes records durably and recovers on opening (store.py);
- `verify` and `iter_records` read a journal back and prove it (reader.py);
- `recall` shows the last coups (recall.py);
- `chain` is the pure core they share: canonical form, hashes, links.
"""

from shoed.journal.chain import GENESIS, RecordError
from shoed.journal.reader import JournalCorrupt, VerifyReport, iter_records, read_recent, verify
from shoed.journal.recall import CoupLine, events_of, recall
from shoed.journal.store import (
    BadRecord,
    FileOps,
    Journal,
    JournalError,
    JournalLocked,
    RecoveryNote,
    SecretFileError,
    read_secret_file,
)

__all__ = [
    "GENESIS",
    "BadRecord",
    "CoupLine",
    "FileOps",
    "Journal",
    "JournalCorrupt",
    "JournalError",
    "JournalLocked",
    "RecordError",
    "RecoveryNote",
    "SecretFileError",
    "VerifyReport",
    "events_of",
    "iter_records",
    "read_recent",
    "read_secret_file",
    "recall",
    "verify",
]
