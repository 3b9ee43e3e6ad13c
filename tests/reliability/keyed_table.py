"""The real daemon on a scripted native shoe (tests/reliability/pty_shoe.py), with console keys allowed
in the daemon's key directory: the table the command endpoint's and the stream's tests drive."""

from __future__ import annotations

import shutil
import time

import zmq

from harness.processes import Daemon, NotifyListener, remove_dir, short_dir
from tests.reliability.pty_shoe import PtyShoe, ShoeThread


class KeyedTable:
    """The daemon, its shoe, and one allowed key per name in `keys` (name -> role; None: a key file
    without a role, which the daemon takes as a dealer's)."""

    def __init__(self, keys: dict[str, str | None], *extra: str, gate: str = "locked", env: dict | None = None,
                 notify: bool = False) -> None:
        from shoed.net.curve import ClientCurve, create_key_pair, with_role

        self.base = short_dir()
        clients = self.base / "keys" / "clients"
        clients.mkdir(parents=True)
        self.listener = NotifyListener(self.base / "notify") if notify else None
        self.secrets = {}
        for name, role in keys.items():
            public, secret, _ = create_key_pair(self.base / "console", name)
            if role is None:
                shutil.copy(public, clients / f"{name}.key")
            else:
                (clients / f"{name}.key").write_text(with_role(public.read_text(), role))
            self.secrets[name] = secret
        self.default_key = next(iter(keys))
        self.shoe = PtyShoe(str(self.base / "shoe"), gate=gate)
        self.thread = ShoeThread(self.shoe)
        try:
            self.daemon = Daemon(self.base, "--source", f"native:{self.base / 'shoe'}", *extra,
                                 env=self.listener.env(**(env or {})) if self.listener else None)
        except BaseException:
            self.thread.stop()
            if self.listener is not None:
                self.listener.close()
            remove_dir(self.base)
            raise
        self.curves = {name: ClientCurve.from_files(secret, self.base / "keys" / "server.key")
                       for name, secret in self.secrets.items()}
        self.context = zmq.Context()
        self.thread.wait(lambda: self.shoe.host_ready, 10, "the host's Hello")

    def send(self, cmd: str, args: dict | None = None, key: str | None = None, request_id=None) -> dict:
        """As a console that keeps to the rate: a request refused for the rate (every request counts,
        a flood of garbage from this key too) is sent again once the key's rate allows."""
        from shoed.net.commands import send_command

        deadline = time.monotonic() + 5
        while True:
            reply = send_command(self.daemon.commands, cmd, args or {}, self.curves[key or self.default_key],
                                 timeout=5, context=self.context, request_id=request_id)
            if "rate limited" not in str(reply.get("error")) or time.monotonic() > deadline:
                return reply
            time.sleep(0.1)

    def report(self, msg, timeout: float = 5.0) -> None:
        """The shoe reports one message (cards wait for the gate); wait until it is acknowledged."""
        if msg.NAME in ("card", "unreadable", "cut_card"):
            self.thread.wait(lambda: self.shoe.gate_open, timeout, f"the gate, for {msg}")
        self.shoe.offer(msg)
        self.thread.wait(lambda: self.shoe.unacked == 0, timeout, f"the ack of {msg}")

    def close(self) -> None:
        try:
            self.daemon.stop()
        finally:
            self.thread.stop()
            self.context.destroy(linger=0)
            if self.listener is not None:
                self.listener.close()
            remove_dir(self.base)
