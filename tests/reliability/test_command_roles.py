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

import pytest

from harness.processes import run_shoed
from harness.records import journal_inputs
from tests.reliability.keyed_table import KeyedTable

ROLES = {"board-1": "display", "dealer-1": "dealer", "pit-1": "pit"}


class Table(KeyedTable):
    """The daemon, its shoe, and a key of each role."""

    def __init__(self) -> None:
        super().__init__(ROLES, "--stall-after", "0")

    def commands(self) -> list[dict]:
        return [i for i in journal_inputs(self.daemon.journal) if i["kind"] == "command"]


@pytest.fixture(scope="module")
def table():
    t = Table()
    yield t
    t.close()


def test_a_display_key_changes_nothing_and_reads_the_displays_view(table):
    before = table.commands()
    for cmd, args in (("confirm", {}), ("close_shoe", {}), ("open_shoe", {}), ("draw", {}),
                      ("enter_card", {"card": "9H"}), ("burn_card", {}), ("void", {"reason": "x"}), ("unlock", {}),
                      ("clear_alarm", {"alarm": "foreign_card"})):
        reply = table.send(cmd, args, key="board-1")
        assert reply["ok"] is False, (cmd, reply)
        assert reply["error"] == (f"{cmd} changes the table, and board-1 has the display role "
                                  "(read-only: status); nothing was done"), reply
    assert table.commands() == before  # refused at the endpoint: the table never saw them
    status = table.send("status", key="board-1")
    assert status["ok"] is True and status["status"]["odds"] is None  # the displays' view
    assert "remaining_by_rank" not in (status["status"].get("shoe") or {})
    assert table.send("status", key="dealer-1")["ok"] is True


def test_a_request_sent_again_with_its_id_is_answered_once_and_not_run_twice(table):
    from firmware_protocol import messages as m

    table.report(m.ShoeInserted())
    assert table.send("status", key="pit-1")["status"]["shoe"] is not None
    first = table.send("close_shoe", request_id="console-42", key="dealer-1")
    assert first == {"ok": True, "id": "console-42", "cmd": "close_shoe"}, first
    again = table.send("close_shoe", request_id="console-42", key="dealer-1")
    assert again == {**first, "repeat": True}  # not "no shoe is open": it did not run again
    assert sum(c["cmd"] == "close_shoe" for c in table.commands()) == 1
    # The same id from another key is that key's own request.
    other = table.send("close_shoe", request_id="console-42", key="pit-1")
    assert other["ok"] is False and "repeat" not in other
    # The same id with another request is refused, and runs nothing.
    n = len(table.commands())
    clash = table.send("confirm", request_id="console-42", key="dealer-1")
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


def test_clear_alarm_is_the_pits_and_names_the_alarm(table):
    server_key = str(table.base / "keys" / "server.key")

    def clear(key: str, *args: str) -> dict:
        proc = run_shoed("command", "clear_alarm", *args, "--endpoint", table.daemon.commands,
                         "--key", str(table.secrets[key]), "--server-key", server_key, "--json", check=False)
        return json.loads(proc.stdout)

    n = len(table.commands())
    reply = clear("dealer-1", "--arg", "alarm=foreign_card")
    assert reply["ok"] is False and reply["error"] == "clear_alarm needs the pit or surveillance role; dealer-1 is dealer"
    reply = clear("pit-1", "--arg", "alarm=foreign_card")
    assert reply == {"ok": False, "error": "the alarm foreign_card is not raised", "cmd": "clear_alarm"}, reply
    reply = clear("pit-1")  # no alarm named: the endpoint's refusal, before the table sees it
    assert reply["ok"] is False and reply["error"].startswith("bad arguments for clear_alarm"), reply
    reply = clear("pit-1", "--arg", "alarm=Foreign Card!")
    assert reply["ok"] is False and reply["error"].startswith("bad arguments for clear_alarm"), reply
    assert len(table.commands()) == n + 2  # the table's refusals are journaled; the endpoint's are not
