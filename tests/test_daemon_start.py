"""A start that fails half-way closes what it had made (shoed.daemon.loop: each part whole or closed).

The daemon runs in this process; nothing is dealt. A start refused at the network side leaves
the journal unlocked and the endpoints free, so that the next start (or `shoed journal`) can
take them at once, with no shutdown() called.
"""

from __future__ import annotations

import pytest
import zmq

from shoed.daemon.config import Config, Source


def _config(base, commands: str) -> Config:
    return Config(journal_dir=str(base / "journal"), key_dir=str(base / "keys"), events=f"ipc://{base}/events",
                  snapshot=f"ipc://{base}/snapshot", commands=commands, curve_commands=False,
                  sources=(Source("native", str(base / "no-shoe")),), embedded_default=False)


def test_a_start_refused_at_an_endpoint_closes_the_journal_and_the_bound_endpoints(base):
    from shoed.daemon import Daemon, DaemonError
    from shoed.journal import Journal

    context = zmq.Context()
    taken = context.socket(zmq.ROUTER)
    taken.bind("tcp://127.0.0.1:*")
    commands = taken.getsockopt_string(zmq.LAST_ENDPOINT)
    try:
        # The events and snapshot endpoints are bound before the command endpoint is refused.
        daemon = Daemon(_config(base, commands))
        with pytest.raises(DaemonError, match="cannot bind a ZeroMQ endpoint"):
            daemon.start()
            daemon.shutdown()  # (a start that was not refused)
        assert daemon.table is None
        with Journal(base / "journal", "t1") as journal:  # the directory's lock was released
            assert journal.path is not None and journal.jseq == 2  # the header and the table's checkpoint
    finally:
        taken.close(0)
        context.term()
    # The same endpoints bind again at once: nothing of the refused start holds them.
    daemon = Daemon(_config(base, commands))
    daemon.start()
    try:
        assert daemon.controller.seq >= 1
        assert daemon.table is not None and len(daemon.table.net.publishers) == 1
    finally:
        daemon.shutdown()


def test_a_virtual_shoe_at_a_table_on_ports_the_system_chooses_follows_the_bound_endpoints(base):
    """tcp://127.0.0.1:0 in the configuration: the ports are chosen at the bind, and the embedded
    virtual dealer follows those (given port 0 it could not connect, and the shoe never started)."""
    from shoed.daemon import Daemon

    cfg = Config(journal_dir=str(base / "journal"), key_dir=str(base / "keys"), events="tcp://127.0.0.1:0",
                 snapshot="tcp://127.0.0.1:0", commands="tcp://127.0.0.1:0", curve_commands=False,
                 sources=(Source("virtual", ""),), embedded_default=False, sim_pace=0.0, sim_shoes=1)
    daemon = Daemon(cfg)
    daemon.start()
    try:
        table = daemon.table
        assert table is not None
        bound = table.net.bound()
        assert all(not endpoint.endswith(":0") for endpoint in bound.values()), bound
        virtual = table.sources.virtual
        assert virtual is not None and virtual.proc.poll() is None
        follow = virtual.proc.args[virtual.proc.args.index("--follow") + 1]
        assert follow == f"{bound['events']},{bound['snapshot']},{bound['commands']}"
    finally:
        daemon.shutdown()
