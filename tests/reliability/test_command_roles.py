"""Who may do what at the real daemon's command endpoint, and a request sent twice.

A display board's key (role `display`) reads the table and changes nothing: every command
but `status` is refused at the endpoint, before the table sees it (nothing is journaled),
and its `status` is the displays' view. A request sent again with the same `id` from the
same key (a console retrying after a lost reply) is answered with the first reply, marked
`repeat`, and does not run again. `shoed command --arg` keeps a string argument a string.

The shoe is a scripted native shoe on a real pseudo-terminal (tests/reliability/pty_shoe.py).
"""

from __future__ import annotations

import json
import time

import pytest
import zmq

from harness.processes import Daemon, remove_dir, run_shoed, short_dir
from harness.records import journal_inputs
from tests.reliability.pty_shoe import PtyShoe, ShoeThread

ROLES = {"board-1": "display", "dealer-1": "dealer", "pit-1": "pit"}


class Table:
    """The daemon, its shoe, and a key of each role."""

    def __init__(self) -> None:
        from shoed.net.curve import create_key_pair, with_role

        self.base = short_dir()
        clients = self.base / "keys" / "clients"
        clients.mkdir(parents=True)
        self.secrets = {}
        for name, role in ROLES.items():
            public, secret, _ = create_key_pair(self.base / "console", name)
            (clients / f"{name}.key").write_text(with_role(public.read_text(), role))
            self.secrets[name] = secret
        self.shoe = PtyShoe(str(self.base / "shoe"), gate="locked")
        self.thread = ShoeThread(self.shoe)
        try:
            self.daemon = Daemon(self.base, "--source", f"native:{self.base / 'shoe'}", "--stall-after", "0")
        except BaseException:
            self.thread.stop()
            remove_dir(self.base)
            raise
        self.context = zmq.Context()
        self.thread.wait(lambda: self.shoe.host_ready, 10, "the host's Hello")

    def keys(self, name: str):
        from shoed.net.curve import ClientCurve

        return ClientCurve.from_files(self.secrets[name], self.base / "keys" / "server.key")

    def send(self, who: str, cmd: str, args: dict | None = None, request_id=None) -> dict:
        from shoed.net.commands import send_command

        deadline = time.monotonic() + 5
        while True:
            reply = send_command(self.daemon.commands, cmd, args or {}, self.keys(who), timeout=5,
                                 context=self.context, request_id=request_id)
            if "rate limited" not in str(reply.get("error")) or time.monotonic() > deadline:
                return reply
            time.sleep(0.1)

    def report(self, msg, timeout: float = 5.0) -> None:
        self.shoe.offer(msg)
        self.thread.wait(lambda: self.shoe.unacked == 0, timeout, f"the ack of {msg}")

    def commands(self) -> list[dict]:
        return [i for i in journal_inputs(self.daemon.journal) if i["kind"] == "command"]

    def close(self) -> None:
        try:
            self.daemon.stop()
        finally:
            self.thread.stop()
            self.context.destroy(linger=0)
            remove_dir(self.base)


@pytest.fixture(scope="module")
def table():
    t = Table()
    yield t
    t.close()


def test_a_display_key_changes_nothing_and_reads_the_displays_view(table):
    before = table.commands()
    for cmd, args in (("confirm", {}), ("close_shoe", {}), ("open_shoe", {}), ("draw", {}),
                      ("enter_card", {"card": "9H"}), ("burn_card", {}), ("void", {"reason": "x"}), ("unlock", {})):
        reply = table.send("board-1", cmd, args)
        assert reply["ok"] is False, (cmd, reply)
        assert reply["error"] == (f"{cmd} changes the table, and board-1 has the display role "
                                  "(read-only: status); nothing was done"), reply
    assert table.commands() == before  # refused at the endpoint: the table never saw them
    status = table.send("board-1", "status")
    assert status["ok"] is True and status["status"]["odds"] is None  # the displays' view
    assert "remaining_by_rank" not in (status["status"].get("shoe") or {})
    assert table.send("dealer-1", "status")["ok"] is True


def test_a_request_sent_again_with_its_id_is_answered_once_and_not_run_twice(table):
    from firmware_protocol import messages as m

    table.report(m.ShoeInserted())
    assert table.send("pit-1", "status")["status"]["shoe"] is not None
    first = table.send("dealer-1", "close_shoe", request_id="console-42")
    assert first == {"ok": True, "id": "console-42", "cmd": "close_shoe"}, first
    again = table.send("dealer-1", "close_shoe", request_id="console-42")
    assert again == {**first, "repeat": True}  # not "no shoe is open": it did not run again
    assert sum(c["cmd"] == "close_shoe" for c in table.commands()) == 1
    # The same id from another key is that key's own request.
    other = table.send("pit-1", "close_shoe", request_id="console-42")
    assert other["ok"] is False and "repeat" not in other
    # The same id with another request is refused, and runs nothing.
    n = len(table.commands())
    clash = table.send("dealer-1", "confirm", request_id="console-42")
    assert clash["ok"] is False and "was sent before with another request" in clash["error"], clash
    assert len(table.commands()) == n


def test_shoed_command_keeps_a_reason_of_digits_a_string(table):
    proc = run_shoed("command", "void", "--arg", "reason=4711", "--endpoint", table.daemon.commands,
                     "--key", str(table.secrets["pit-1"]), "--server-key", str(table.base / "keys" / "server.key"),
                     "--json")
    reply = json.loads(proc.stdout)
    # The table's own answer (no coup to void), not the endpoint's refusal of an int for a reason.
    assert reply["ok"] is False and "bad arguments" not in reply["error"], reply
    assert reply["error"] in ("no shoe is open", "no coup to void"), reply
