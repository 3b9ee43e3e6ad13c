"""CURVE key files, allow-lists and the authenticator (shoed.net.curve).

table-game-standards item 15: CURVE needs a running ZAP authenticator with an
allow-list, started before the socket binds; without one, any client that
knows the server key gets in.
"""

from __future__ import annotations

import os
import shutil
import stat

import pytest
import zmq

from shoed.net.curve import (
    ClientCurve,
    CurveError,
    ServerCurve,
    create_key_pair,
    load_allow_list,
    load_key_pair,
    load_public_key,
)


def test_key_pair_files_and_modes(tmp_path):
    public_file, secret_file, key = create_key_pair(tmp_path / "keys", "dealer-console-1")
    assert public_file.name == "dealer-console-1.key"
    assert secret_file.name == "dealer-console-1.key_secret"
    assert stat.S_IMODE(secret_file.stat().st_mode) == 0o600
    assert stat.S_IMODE(public_file.stat().st_mode) == 0o644
    assert len(key) == 40
    assert load_public_key(public_file).decode() == key
    public, secret = load_key_pair(secret_file)
    assert public.decode() == key and secret != public
    assert b"secret-key" not in public_file.read_bytes()
    # Nothing left behind but the two files.
    assert sorted(p.name for p in (tmp_path / "keys").iterdir()) == ["dealer-console-1.key", "dealer-console-1.key_secret"]


def test_existing_key_pair_is_never_overwritten(tmp_path):
    _public_file, secret_file, _ = create_key_pair(tmp_path, "pit")
    before = secret_file.read_bytes()
    with pytest.raises(CurveError, match="already exists"):
        create_key_pair(tmp_path, "pit")
    assert secret_file.read_bytes() == before


@pytest.mark.parametrize("name", ["", "../evil", "a/b", "x.key", "x.key_secret", ".hidden", "a b"])
def test_key_names_are_plain_file_names(tmp_path, name):
    with pytest.raises(CurveError, match="key name"):
        create_key_pair(tmp_path, name)


def test_secret_key_readable_by_others_is_refused(tmp_path):
    _, secret_file, _ = create_key_pair(tmp_path, "console")
    os.chmod(secret_file, 0o644)
    with pytest.raises(CurveError, match="chmod 600"):
        load_key_pair(secret_file)


def test_public_file_is_not_a_key_pair(tmp_path):
    public_file, _, _ = create_key_pair(tmp_path, "console")
    with pytest.raises(CurveError, match="no secret key"):
        load_key_pair(public_file)


def test_allow_list_names_keys_by_file(tmp_path):
    made = {name: create_key_pair(tmp_path / "made", name) for name in ("console", "pit-boss")}
    allow = tmp_path / "allow"
    allow.mkdir()
    for public_file, _, _ in made.values():
        shutil.copy(public_file, allow)
    (allow / "README").write_text("not a key, not *.key: ignored")
    keys = load_allow_list(allow)
    assert keys == {made[n][2].encode(): n for n in made}


# (file name, content, error)
BAD_ALLOW_FILES = [
    ("broken.key", "metadata\ncurve\n", "holds no public key"),
    ("short.key", 'curve\n    public-key = "abc"\n', "40-character"),
    ("notz85.key", 'curve\n    public-key = "' + "~" * 40 + '"\n', "not valid Z85"),
]


@pytest.mark.parametrize(("name", "content", "error"), BAD_ALLOW_FILES)
def test_allow_list_fails_loudly_on_bad_files(tmp_path, name, content, error):
    (tmp_path / name).write_text(content)
    with pytest.raises(CurveError, match=error):
        load_allow_list(tmp_path)


def test_secret_key_in_allow_list_is_refused(tmp_path):
    _, secret_file, _ = create_key_pair(tmp_path / "made", "console")
    shutil.copy(secret_file, tmp_path / "console.key")
    with pytest.raises(CurveError, match="secret key"):
        load_allow_list(tmp_path)


def test_missing_allow_list_directory(tmp_path):
    with pytest.raises(CurveError, match="does not exist"):
        load_allow_list(tmp_path / "nope")


def _handshake(ctx, server_socket_setup, client: ClientCurve, timeout_ms: int) -> bool:
    """Does a message from `client` reach a ROUTER configured by `server_socket_setup` within `timeout_ms`?"""
    srv = ctx.socket(zmq.ROUTER)
    srv.linger = 0
    server_socket_setup(srv)
    port = srv.bind_to_random_port("tcp://127.0.0.1")
    cli = ctx.socket(zmq.DEALER)
    cli.linger = 0
    client.apply(cli)
    cli.connect(f"tcp://127.0.0.1:{port}")
    cli.send(b"hello")
    try:
        return bool(srv.poll(timeout_ms))
    finally:
        srv.close(0)
        cli.close(0)


def _admitted(ctx, server_socket_setup, client: ClientCurve) -> bool:
    """A message that should arrive is given time to on a loaded machine (it returns as soon as it does)."""
    return _handshake(ctx, server_socket_setup, client, timeout_ms=5000)


def _refused(ctx, server_socket_setup, client: ClientCurve) -> bool:
    """Half a second without the message: a refused handshake (ZAP answers within milliseconds)."""
    return not _handshake(ctx, server_socket_setup, client, timeout_ms=500)


def test_without_zap_handler_curve_admits_anyone(ctx, keys):
    """The trap item 15 warns of, shown on bare libzmq: the reason ServerCurve exists."""
    public, secret = load_key_pair(keys.server_secret_file)

    def bare(sock):
        sock.curve_server = True
        sock.curve_publickey, sock.curve_secretkey = public, secret

    assert _admitted(ctx, bare, keys.client("stranger"))


def test_server_curve_admits_allowed_and_refuses_strangers(ctx, keys):
    with keys.server(ctx) as curve:
        assert _admitted(ctx, curve.apply, keys.client("dealer-console"))
        assert _refused(ctx, curve.apply, keys.client("stranger"))


def test_client_with_wrong_server_key_is_refused(ctx, keys):
    with keys.server(ctx) as curve:
        good = keys.client("dealer-console")
        wrong = ClientCurve(good.public_key, good.secret_key, keys.client("pit-boss").public_key)
        assert _refused(ctx, curve.apply, wrong)


def test_stopped_authenticator_refuses_everyone(ctx, keys):
    """ZAP_ENFORCE_DOMAIN: if the authenticator goes away, the door shuts rather than opens."""
    curve = keys.server(ctx)
    sockets = []

    def setup(sock):
        curve.apply(sock)
        sockets.append(sock)

    srv = ctx.socket(zmq.ROUTER)
    srv.linger = 0
    setup(srv)
    port = srv.bind_to_random_port("tcp://127.0.0.1")
    curve.close()
    cli = ctx.socket(zmq.DEALER)
    cli.linger = 0
    keys.client("dealer-console").apply(cli)
    cli.connect(f"tcp://127.0.0.1:{port}")
    cli.send(b"hello")
    assert not srv.poll(500)
    with pytest.raises(CurveError, match="not running"):
        curve.apply(ctx.socket(zmq.ROUTER))
    srv.close(0)
    cli.close(0)


def test_socket_of_another_context_is_refused(ctx, keys):
    other = zmq.Context()
    try:
        with keys.server(ctx) as curve:
            sock = other.socket(zmq.ROUTER)
            with pytest.raises(CurveError, match="another ZeroMQ context"):
                curve.apply(sock)
            sock.close(0)
    finally:
        other.term()


def test_per_domain_allow_lists(ctx, keys, tmp_path):
    """Displays may read events without being allowed to send commands."""
    displays = tmp_path / "displays"
    displays.mkdir()
    shutil.copy(keys.clients_dir / "stranger.key", displays / "lobby-display.key")
    with keys.server(ctx, {"commands": keys.allow_dir, "events": displays}) as curve:
        assert _admitted(ctx, lambda s: curve.apply(s, "events"), keys.client("stranger"))
        assert _refused(ctx, lambda s: curve.apply(s, "commands"), keys.client("stranger"))
        assert curve.client_name(keys.client_keys["stranger"], "events") == "lobby-display"
        with pytest.raises(CurveError, match="no allow-list"):
            curve.apply(ctx.socket(zmq.ROUTER), "shoed")


def test_reload_takes_added_and_removed_keys(ctx, keys, tmp_path):
    allow = tmp_path / "allow"
    shutil.copytree(keys.allow_dir, allow)
    with keys.server(ctx, allow) as curve:
        assert _refused(ctx, curve.apply, keys.client("stranger"))
        shutil.copy(keys.clients_dir / "stranger.key", allow / "new-pit-laptop.key")
        (allow / "pit-boss.key").unlink()
        assert curve.reload() == {"shoed": 2}
        assert _admitted(ctx, curve.apply, keys.client("stranger"))
        assert _refused(ctx, curve.apply, keys.client("pit-boss"))
        assert curve.client_name(keys.client_keys["stranger"]) == "new-pit-laptop"


def test_reload_with_a_bad_file_keeps_the_old_list(ctx, keys, tmp_path):
    allow = tmp_path / "allow"
    shutil.copytree(keys.allow_dir, allow)
    with keys.server(ctx, allow) as curve:
        (allow / "junk.key").write_text("junk")
        with pytest.raises(CurveError):
            curve.reload()
        assert _admitted(ctx, curve.apply, keys.client("dealer-console"))


@pytest.mark.timeout(30)
def test_reload_with_a_fifo_in_the_allow_list_is_refused_at_once(ctx, keys, tmp_path):
    """`systemctl reload shoed` runs between two turns of the daemon's loop: a FIFO named like a key
    in the allow-list (opened plainly, it waits for a writer for ever) must not stop the table."""
    import os

    allow = tmp_path / "allow"
    shutil.copytree(keys.allow_dir, allow)
    with keys.server(ctx, allow) as curve:
        os.mkfifo(allow / "evil.key")
        with pytest.raises(CurveError, match="evil.key: not a regular file"):
            curve.reload()
        assert _admitted(ctx, curve.apply, keys.client("dealer-console"))


def test_authenticator_starts_with_the_first_socket_when_no_context_is_given(ctx, keys):
    curve = ServerCurve(None, keys.server_secret_file, keys.allow_dir)
    try:
        assert not curve.running()
        assert _admitted(ctx, curve.apply, keys.client("dealer-console"))
        assert curve.running() and curve.context is ctx
        assert _refused(ctx, curve.apply, keys.client("stranger"))
    finally:
        curve.close()


def test_one_authenticator_per_context(ctx, keys):
    with keys.server(ctx), pytest.raises(CurveError, match="already runs"):
        keys.server(ctx)


def test_from_key_dir_reads_the_daemons_layout(ctx, keys, tmp_path):
    with pytest.raises(CurveError, match="shoed keys new server"):
        ServerCurve.from_key_dir(tmp_path, ctx)
    create_key_pair(tmp_path, "server")
    with pytest.raises(CurveError, match="allow-list directory"):
        ServerCurve.from_key_dir(tmp_path, ctx)
    shutil.copytree(keys.allow_dir, tmp_path / "clients")
    with ServerCurve.from_key_dir(tmp_path) as curve:
        server_side = ClientCurve(keys.client("pit-boss").public_key, keys.client("pit-boss").secret_key,
                                  load_public_key(tmp_path / "server.key"))
        assert curve.public_key == server_side.server_key
        assert _admitted(ctx, curve.apply, server_side)


def test_attach_secures_the_sockets_of_another_context(ctx, keys):
    """The daemon gives each event stream a context of its own: one allow-list serves them all."""
    other = zmq.Context()
    try:
        with keys.server(ctx) as curve:
            curve.attach(other)
            curve.attach(other)  # once is enough; twice changes nothing
            assert _admitted(other, curve.apply, keys.client("dealer-console"))
            assert _refused(other, curve.apply, keys.client("stranger"))
            assert curve.running()
        assert not curve.running()
    finally:
        other.term()


def test_the_zap_handler_is_shoeds_own_thread_not_pyzmqs_asyncio_authenticator(ctx, keys):
    import threading

    with keys.server(ctx):
        names = [t.name for t in threading.enumerate()]
    assert "shoed-zap" in names and not any("Authenticator" in type(t).__name__ for t in threading.enumerate())


def test_the_surveillance_endpoints_admit_the_pit_and_surveillance_roles_only(ctx, tmp_path):
    """One allow-list serves the daemon (`from_key_dir`); its surveillance endpoints, which carry
    face-down cards, refuse a dealer's console or a display board's key on it (the dealer role,
    and a key file that names no role)."""
    from shoed.net.curve import SURVEILLANCE_DOMAIN, with_role

    create_key_pair(tmp_path, "server")
    (tmp_path / "clients").mkdir()
    clients = {}
    for name, role in (("console", "dealer"), ("board", None), ("pit", "pit"), ("cctv", "surveillance")):
        public, secret, _ = create_key_pair(tmp_path / "made", name)
        text = public.read_text()
        (tmp_path / "clients" / f"{name}.key").write_text(with_role(text, role) if role else text)
        clients[name] = ClientCurve.from_files(secret, tmp_path / "server.key")
    curve = ServerCurve.from_key_dir(tmp_path, ctx)
    try:
        def surveillance(sock):
            curve.apply(sock, SURVEILLANCE_DOMAIN)

        for name in ("pit", "cctv"):
            assert _admitted(ctx, surveillance, clients[name]), name
        for name in ("console", "board"):
            assert _refused(ctx, surveillance, clients[name]), name
            assert _admitted(ctx, curve.apply, clients[name]), name  # the commands and display endpoints
        assert curve.reload() == {"shoed": 4, SURVEILLANCE_DOMAIN: 2}
    finally:
        curve.close()


def test_one_key_in_two_files_is_refused_at_load_and_at_reload_which_keeps_the_old_list(ctx, keys, tmp_path):
    """A stale copy of a key under another name (and role) must not decide the key's name and role by
    the files' order: the list is refused, naming both files; a reload keeps the list in force."""
    from shoed.net.curve import with_role

    allow = tmp_path / "allow"
    shutil.copytree(keys.allow_dir, allow)
    stale = allow / "zz-old-copy.key"
    stale.write_text(with_role((allow / "pit-boss.key").read_text(), "pit"))
    with pytest.raises(CurveError) as refused:
        load_allow_list(allow)
    assert str(refused.value) == (f"allow-list: the same public key is in {allow / 'pit-boss.key'} and {stale}; "
                                  "remove one of them")
    stale.unlink()
    with keys.server(ctx, allow) as curve:
        stale.write_text(with_role((allow / "pit-boss.key").read_text(), "pit"))
        with pytest.raises(CurveError, match="the same public key is in"):
            curve.reload()
        assert curve.client_name(keys.client_keys["pit-boss"]) == "pit-boss"
        assert curve.client_role(keys.client_keys["pit-boss"]) == "dealer"
        assert _admitted(ctx, curve.apply, keys.client("pit-boss"))


def test_an_allow_list_others_may_write_is_refused_at_reload_which_keeps_the_old_list(ctx, keys, tmp_path):
    allow = tmp_path / "allow"
    shutil.copytree(keys.allow_dir, allow)
    os.chmod(allow, 0o755)
    with keys.server(ctx, allow) as curve:
        os.chmod(allow, 0o777)
        with pytest.raises(CurveError, match="is writable by others"):
            curve.reload()
        assert _admitted(ctx, curve.apply, keys.client("dealer-console"))
        os.chmod(allow, 0o755)


def test_a_display_key_is_admitted_where_displays_read_and_refused_by_surveillance(ctx, tmp_path):
    from shoed.net.curve import READ_ONLY_ROLES, SURVEILLANCE_DOMAIN, with_role

    assert READ_ONLY_ROLES == ("display",)
    create_key_pair(tmp_path, "server")
    (tmp_path / "clients").mkdir()
    public, secret, key = create_key_pair(tmp_path / "made", "board")
    (tmp_path / "clients" / "board.key").write_text(with_role(public.read_text(), "display"))
    board = ClientCurve.from_files(secret, tmp_path / "server.key")
    with ServerCurve.from_key_dir(tmp_path, ctx) as curve:
        assert curve.client_role(key) == "display"
        assert _admitted(ctx, curve.apply, board)  # the display endpoints (and status at the command endpoint)
        assert _refused(ctx, lambda sock: curve.apply(sock, SURVEILLANCE_DOMAIN), board)
