"""The virtual dealer follows the table, as a careful dealer watches the table's display.

The deal itself is scripted (dealer.py): the cards, the buttons and the dealing faults
the plan asks for. What the script cannot know is what the table makes of them. This
follower subscribes to the table's events and, through the command endpoint, does what a
careful dealer does when the table asks:

- a misdeal corrected by burning or returning the card: `burn_card` / `return_card`;
- an unreadable card: `enter_card` with the card the dealer holds (the ground truth);
- a confirm refused (the shoe's button pressed while a misdeal was open): `confirm` again
  once the table has published the correction of every open misdeal. The follower keeps
  the open misdeals from the events themselves (`misdeal`, `misdeal.corrected`,
  `coup.void`), never from an alarm's text, which a display's stream does not carry;
- a coup voided (by the pit, or by a misdeal that cannot be corrected): the rest of
  that coup is not dealt (its cards go to the discards with it) and the dealer confirms
  the void, which opens the next coup.

The shoe deals nothing until the follower has the table's snapshot (`watching`): every card
and every answer of the table to it is then in the events this dealer reads.

After each confirm the shoe deals no card until the table has answered it (`coup.confirmed`,
or a `missing_card` misdeal for a confirm pressed too early); a refused confirm holds the deal
until this dealer's own confirm goes through. A card dealt
before the answer would land in the coup the table still has open (an extra card), and with no
gate on the shoe nothing else stops it.

A shoe that ended at its last coup is taken out (`shoe_removed`) only once the table has
published `shoe.finished`: the last coup confirmed, every misdeal in it put right.

Without keys (no key files given) the dealer's commands go without CURVE, as a lab bench's
command endpoint takes them (`curve_commands = false`). A command that fails (no reply, the
endpoint wants keys) is logged in one line; the dealer goes on following the table.

Missing cards need nothing: the script deals the card that is due and confirms again.

At a plain shoe (`VirtualShoe(plain=True)`), which reads no card, the table asks for
the cards its draws leave unidentified (the exposed card, the first cards until the
cut is found). Each draw is one `card` or `shoe.burn` event, so the dealer counts
them to know which card each unidentified one was; this needs the follower watching
from the shoe's first draw.
"""

from __future__ import annotations

import logging
import threading
from collections import deque
from typing import TYPE_CHECKING

from shoed.simulate.dealer import UNREADABLE

if TYPE_CHECKING:
    from shoed.net.curve import ClientCurve

log = logging.getLogger("shoed.simulate.follow")

_COMMAND_OF = {"burn": "burn_card", "return": "return_card"}
ACTIONS_KEPT = 1000
DRAWS_KEPT = 1000  # a plain shoe's draws kept for the table to ask for (a shoe has 416 cards at most)


class TableFollower:
    """A thread that watches one table and corrects what the virtual shoe's deal caused."""

    def __init__(self, shoe, table: str, events: str, snapshot: str, commands: str,
                 key_file: str | None = None, server_key_file: str | None = None) -> None:
        self.shoe = shoe
        self.table = table
        self.events, self.snapshot, self.commands = events, snapshot, commands
        self.key_file, self.server_key_file = key_file, server_key_file
        self.keys: ClientCurve | None = None  # the dealer's CURVE keys, read when it starts; None: a command endpoint without CURVE
        self.confirm_owed: int | None = None  # the coup whose refused confirm this dealer owes the table
        self.open_misdeals: set[int] = set()  # correctable misdeals the table has not published corrected
        # Set once the table's snapshot is in: a careful dealer looks at the table before the first card
        # (a card dealt before, and the table's answer to it, would go by unseen).
        self.watching = threading.Event()
        self.finished = 0  # shoes the table has finished (shoe.finished) since this dealer looked
        self.entered = 0  # unreadable game cards entered by hand so far
        self.drawn = 0  # at a plain shoe: cards out so far, one table event each
        self.unidentified: list[int] = []  # at a plain shoe: draws the table could not identify, oldest first
        # The last commands sent: (command, args, accepted).
        self.actions: deque[tuple[str, dict, bool]] = deque(maxlen=ACTIONS_KEPT)
        # The cards this dealer may be asked for, as the shoe puts them out (in the shoe's thread):
        # each unreadable game card until entered; at a plain shoe, every draw from the oldest the
        # table may still ask for (the first not yet seen at the table, or not yet identified).
        self._held = threading.Lock()
        self._unread: deque[str] = deque(maxlen=DRAWS_KEPT)
        self._draws: deque[str] = deque()
        self._first_draw = 0  # the draw number of _draws[0]
        shoe.listeners.append(self._out)
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, name="table-follower", daemon=True)

    def start(self) -> None:
        self._thread.start()

    def stop(self) -> None:
        self._stop.set()
        self._thread.join(5)

    def _run(self) -> None:
        from shoed.net.client import TableClient
        from shoed.net.curve import ClientCurve

        if self.key_file and self.server_key_file:
            self.keys = ClientCurve.from_files(self.key_file, self.server_key_file)
        client = TableClient(self.events, self.snapshot, self.table)
        try:
            while not self._stop.is_set():
                for item in client.poll(0.2):
                    try:
                        self.on(item)
                    except Exception:  # noqa: BLE001 - a dealer who fails to follow keeps dealing
                        log.exception("the virtual dealer could not follow %s", item.get("kind"))
        finally:
            client.close()

    def command(self, cmd: str, **args) -> bool:
        """Send one command (without keys where this dealer has none: a lab bench's endpoint takes
        none); whether the table took it. A command that fails is logged and is not taken."""
        from shoed.net.commands import send_command

        try:
            if self.keys is None:
                reply = send_command(self.commands, cmd, args, timeout=5, insecure=True)
            else:
                reply = send_command(self.commands, cmd, args, self.keys, timeout=5)
        except Exception as exc:  # noqa: BLE001 - a dealer whose command fails keeps following the table
            log.warning("the virtual dealer's %s failed: %s: %s", cmd, type(exc).__name__, exc)
            reply = {"ok": False}
        self.actions.append((cmd, args, bool(reply.get("ok"))))
        return bool(reply.get("ok"))

    def on(self, item: dict) -> None:
        kind = item.get("kind")
        if self.shoe.plain and kind in ("card", "shoe.burn") \
                and not str(item.get("source", "")).startswith("manual:"):  # a card entered is no draw
            with self._held:
                if kind == "card" and item.get("recipient") == "unreadable":
                    self.unidentified.append(self.drawn)
                self.drawn += 1
                self._forget_draws()
        if kind == "snapshot":  # what was open before this dealer looked at the table
            state = item.get("state") or {}
            for entry in state.get("pending_misdeals") or []:
                self._misdeal(entry | {"correctable": True}, (state.get("coup") or {}).get("number"))
            if self.shoe.setup.resume is not None and (state.get("shoe") or {}).get("phase") == "finished":
                self.finished = max(self.finished, 1)  # the shoe resumed is finished already: it comes out
            self.watching.set()
        elif kind == "misdeal":
            self._misdeal(item["misdeal"], item.get("coup"))
        elif kind == "misdeal.corrected":
            self.open_misdeals.discard(item.get("misdeal"))
            self._confirm_if_owed()
        elif kind in ("coup.confirmed", "shoe.finished", "shoe.closed"):
            self.finished += kind == "shoe.finished"
            self.shoe.holding.clear()
            self.shoe.answer_due.clear()
            self.confirm_owed = None
            self.open_misdeals.clear()
        elif kind == "alarm" and item.get("alarm") == "confirm_refused":
            # The shoe's confirm came while a misdeal was open: the dealer presses it again once
            # every open misdeal is corrected (at once when it already is).
            self.confirm_owed = item.get("coup")
            self._confirm_if_owed()
        elif kind == "coup.void":
            self.open_misdeals.clear()
            self.confirm_owed = None
            if not str(item.get("reason", "")).startswith("the shoe was closed") and self.shoe.abandon_coup():
                # For this coup only: a confirm of the shoe's, sent before the dealer saw the void, may
                # have confirmed it already (the table then refuses this one).
                self.command("confirm", coup=item.get("coup"))

    def shoe_finished(self, number: int) -> bool:
        """The table has finished the run's shoe `number` (from 1): the dealer may take it out."""
        return self.finished >= number

    def _confirm_if_owed(self) -> None:
        if self.confirm_owed is not None and not self.open_misdeals:
            if self.command("confirm", coup=self.confirm_owed):
                self.confirm_owed = None

    def _misdeal(self, detail: dict, coup: int | None) -> None:
        if not detail.get("correctable"):
            self.shoe.holding.set()  # the coup is void (its coup.void follows): no more of it is dealt
            return
        self.open_misdeals.add(detail["id"])
        if detail.get("kind") == "missing_card":
            self.shoe.answer_due.clear()  # the table's answer to a confirm pressed too early: the card is due
        correction = detail.get("correction")
        done = False
        self.shoe.holding.set()  # no card drawn until the table has this put right
        try:
            if correction in _COMMAND_OF:
                done = self.command(_COMMAND_OF[correction], misdeal=detail["id"])
            elif correction == "enter_by_hand":
                card = self._unreadable_card()
                if card is not None:
                    done = self.command("enter_card", misdeal=detail["id"], card=card)
        finally:
            # After an extra card the next card waits for the coup's confirm (the dealer's own, or
            # the one this dealer owes after a refusal): drawn before it, it would be extra too.
            if detail.get("kind") != "extra_card":
                self.shoe.holding.clear()
        if done and detail.get("kind") == "extra_card" and self.shoe.take_confirm():
            self.confirm_owed = coup  # the shoe's confirm button is not pressed: confirmed here

    def _out(self, event) -> None:
        """A card left the shoe (called in the shoe's thread)."""
        with self._held:
            if self.shoe.plain:
                if event.is_card:
                    self._draws.append(event.card)
                    self._forget_draws()
            elif event.kind == UNREADABLE and event.mode == "game":
                self._unread.append(event.card)

    def _unreadable_card(self) -> str | None:
        """The next game card the reader could not identify: the dealer holds it and reads it out."""
        with self._held:
            if self.shoe.plain:
                if not self.unidentified or self.unidentified[0] >= self._first_draw + len(self._draws):
                    return None
                card = self._draws[self.unidentified.pop(0) - self._first_draw]
                self._forget_draws()
            elif self._unread:
                card = self._unread.popleft()
            else:
                return None
        self.entered += 1
        return card

    def _forget_draws(self) -> None:
        """Drop the draws the table can no longer ask for (with the lock held): those before the
        oldest it may still ask for, and any more than DRAWS_KEPT back (a draw never asked for: its
        coup voided instead)."""
        oldest = min(self.unidentified[0], self.drawn) if self.unidentified else self.drawn
        oldest = max(oldest, self._first_draw + len(self._draws) - DRAWS_KEPT)
        while self._draws and self._first_draw < oldest:
            self._draws.popleft()
            self._first_draw += 1
        while self.unidentified and self.unidentified[0] < self._first_draw:
            self.unidentified.pop(0)
