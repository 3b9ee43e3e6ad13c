"""The table: the controller (every input in, events and effects out; pure and deterministic),
its schema (`events`), the replay of a journal through it (`replay`), what it waits for
(`waits`), a card-reading shuffler's reports (`shuffle`) and what each audience may see
(`audience`). The functional core: nothing here does I/O or reads a clock."""

from shoed.table.controller import (  # the controller's public names, re-exported
    Effect,
    StartShoeFile,
    Step,
    TableController,
    WorkOutOdds,
    card_of,
    utc_text,
)
from shoed.table.events import COMMANDS, SCHEMA_VERSION, CommandRejected  # the schema's, re-exported

__all__ = [
    "COMMANDS", "SCHEMA_VERSION", "CommandRejected", "Effect", "StartShoeFile", "Step", "TableController",
    "WorkOutOdds", "card_of", "utc_text",
]
