"""The daemon's own keys on its first start (shoed.net.keys)."""

from __future__ import annotations

from shoed.net.curve import key_role, load_allow_list
from shoed.net.keys import ensure_server_keys


def test_a_first_start_makes_the_server_keys_and_an_empty_allow_list_once(tmp_path):
    public = ensure_server_keys(tmp_path / "keys")
    assert public and (tmp_path / "keys" / "server.key_secret").exists()
    assert list((tmp_path / "keys" / "clients").iterdir()) == []
    made = (tmp_path / "keys" / "server.key_secret").read_bytes()
    assert ensure_server_keys(tmp_path / "keys", local_console=True) is None  # there already: nothing touched
    assert (tmp_path / "keys" / "server.key_secret").read_bytes() == made
    assert not (tmp_path / "keys" / "local-console.key_secret").exists()


def test_the_embedded_default_lets_its_local_console_in_as_the_pit(tmp_path):
    ensure_server_keys(tmp_path, local_console=True)
    allowed = tmp_path / "clients" / "local-console.key"
    assert (tmp_path / "local-console.key_secret").exists() and allowed.exists()
    assert key_role(allowed) == "pit"
    assert len(load_allow_list(tmp_path / "clients")) == 1


def test_a_key_pair_made_beforehand_gets_its_empty_allow_list_at_the_first_start(tmp_path, shoed_cli):
    """docs/installing.md makes the server's key pair with `shoed keys new server` before the first
    start: the daemon then starts with an empty allow-list (it refused to start without clients/)."""
    assert shoed_cli("keys", "new", "server", "--dir", str(tmp_path / "keys")).returncode == 0
    made = (tmp_path / "keys" / "server.key_secret").read_bytes()
    assert ensure_server_keys(tmp_path / "keys") is None
    assert load_allow_list(tmp_path / "keys" / "clients") == {}
    assert (tmp_path / "keys" / "server.key_secret").read_bytes() == made
