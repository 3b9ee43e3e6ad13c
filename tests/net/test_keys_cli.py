"""`shoed keys new | allow | list` (shoed/commands/keys.py)."""

from __future__ import annotations

import json
import stat

from shoed.cli import main
from shoed.net.curve import load_allow_list, load_public_key


def test_keys_new_prints_public_key_and_writes_private_secret(tmp_path, shoed_cli):
    proc = shoed_cli("keys", "new", "dealer-console-1", "--dir", str(tmp_path))
    assert proc.returncode == 0, proc.stderr
    public_key = proc.stdout.splitlines()[0]
    assert load_public_key(tmp_path / "dealer-console-1.key").decode() == public_key
    assert stat.S_IMODE((tmp_path / "dealer-console-1.key_secret").stat().st_mode) == 0o600


def test_keys_new_json_and_refusal_to_overwrite(tmp_path, capsys):
    assert main(["keys", "new", "pit", "--dir", str(tmp_path), "--json"]) == 0
    made = json.loads(capsys.readouterr().out)
    assert set(made) == {"name", "public_key", "public_file", "secret_file"}
    assert main(["keys", "new", "pit", "--dir", str(tmp_path)]) == 2
    assert "already exists" in capsys.readouterr().err


def test_keys_allow_copies_a_public_key_and_lists_it(tmp_path, capsys):
    main(["keys", "new", "pit-laptop", "--dir", str(tmp_path / "client")])
    allow = tmp_path / "allow"
    allow.mkdir()
    capsys.readouterr()
    assert main(["keys", "allow", str(tmp_path / "client" / "pit-laptop.key"), "--dir", str(allow)]) == 0
    key = load_public_key(tmp_path / "client" / "pit-laptop.key")
    assert load_allow_list(allow) == {key: "pit-laptop"}
    assert "allowed pit-laptop" in capsys.readouterr().out
    # Allowing it again is harmless.
    assert main(["keys", "allow", str(tmp_path / "client" / "pit-laptop.key"), "--dir", str(allow)]) == 0
    assert "already allowed" in capsys.readouterr().out
    assert main(["keys", "list", "--dir", str(allow), "--json"]) == 0
    assert json.loads(capsys.readouterr().out) == [{"name": "pit-laptop", "public_key": key.decode(), "role": "dealer"}]


def test_the_documented_sequence_allows_a_client_before_the_daemon_ever_started(tmp_path, capsys):
    """docs/integrators.md and docs/installing.md: the server's pair, a client's, then `keys allow` into
    KEY_DIR/clients, which no daemon has made yet (it was refused: the directory did not exist)."""
    keys, home = tmp_path / "var" / "keys", tmp_path / "home"
    assert main(["keys", "new", "server", "--dir", str(keys)]) == 0
    assert main(["keys", "new", "dealer-console-1", "--dir", str(home)]) == 0
    assert main(["keys", "allow", str(home / "dealer-console-1.key"), "--dir", str(keys / "clients")]) == 0
    assert main(["keys", "list", "--dir", str(keys / "clients"), "--json"]) == 0
    listed = json.loads(capsys.readouterr().out.splitlines()[-1])
    assert listed == [{"name": "dealer-console-1", "role": "dealer",
                       "public_key": load_public_key(home / "dealer-console-1.key").decode()}]


def test_keys_allow_with_a_role_and_the_role_of_a_key_without_one(tmp_path, capsys):
    """Roles on the allow-list (docs/stream-integrity.md): a key file that names none is a dealer's;
    `--role` writes the role into the key file's metadata; allowing it again with another role
    rewrites that one file; the server reads the roles (ServerCurve.client_role)."""
    from shoed.net.curve import ServerCurve, create_key_pair, key_role, load_roles

    for name in ("pit-laptop", "dealer-1", "cctv"):
        main(["keys", "new", name, "--dir", str(tmp_path / "client")])
    allow = tmp_path / "allow"
    allow.mkdir()
    client = tmp_path / "client"
    assert main(["keys", "allow", str(client / "pit-laptop.key"), "--dir", str(allow), "--role", "pit"]) == 0
    assert main(["keys", "allow", str(client / "dealer-1.key"), "--dir", str(allow)]) == 0
    assert main(["keys", "allow", str(client / "cctv.key"), "--dir", str(allow), "--role", "dealer"]) == 0
    assert "as dealer" in capsys.readouterr().out
    assert main(["keys", "allow", str(client / "cctv.key"), "--dir", str(allow), "--role", "surveillance"]) == 0
    assert sorted(p.name for p in allow.iterdir()) == ["cctv.key", "dealer-1.key", "pit-laptop.key"]
    assert key_role(allow / "pit-laptop.key") == "pit" and key_role(allow / "dealer-1.key") == "dealer"
    keys = {name: load_public_key(client / f"{name}.key") for name in ("pit-laptop", "dealer-1", "cctv")}
    assert load_roles(allow) == {keys["pit-laptop"]: "pit", keys["dealer-1"]: "dealer", keys["cctv"]: "surveillance"}
    assert load_allow_list(allow)[keys["cctv"]] == "cctv", "still a key file pyzmq and the allow-list read"
    capsys.readouterr()
    assert main(["keys", "list", "--dir", str(allow)]) == 0
    assert "pit-laptop" in capsys.readouterr().out
    create_key_pair(tmp_path / "server", "server")
    with ServerCurve(None, tmp_path / "server" / "server.key_secret", allow) as curve:
        assert curve.client_role(keys["pit-laptop"]) == "pit" and curve.client_role(keys["dealer-1"]) == "dealer"
        assert curve.client_role(b"x" * 40) is None


def test_a_key_file_naming_an_unknown_role_is_refused(tmp_path, capsys):
    main(["keys", "new", "console", "--dir", str(tmp_path)])
    allow = tmp_path / "allow"
    allow.mkdir()
    text = (tmp_path / "console.key").read_text().replace("metadata\n", "metadata\n    role = boss\n")
    (allow / "console.key").write_text(text)
    capsys.readouterr()
    assert main(["keys", "list", "--dir", str(allow)]) == 2
    assert "role 'boss' is not one of dealer, pit, surveillance" in capsys.readouterr().err


def test_keys_allow_refuses_a_secret_key(tmp_path, capsys):
    main(["keys", "new", "console", "--dir", str(tmp_path / "client")])
    allow = tmp_path / "allow"
    allow.mkdir()
    capsys.readouterr()
    secret_renamed = tmp_path / "client" / "console-copy.key"
    secret_renamed.write_bytes((tmp_path / "client" / "console.key_secret").read_bytes())
    assert main(["keys", "allow", str(tmp_path / "client" / "console.key_secret"), "--dir", str(allow)]) == 2
    assert main(["keys", "allow", str(secret_renamed), "--dir", str(allow)]) == 2
    assert "secret key" in capsys.readouterr().err
    assert list(allow.iterdir()) == []


def test_keys_allow_name_clash_needs_a_new_name(tmp_path, capsys):
    for d in ("a", "b"):
        main(["keys", "new", "console", "--dir", str(tmp_path / d)])
    allow = tmp_path / "allow"
    allow.mkdir()
    assert main(["keys", "allow", str(tmp_path / "a" / "console.key"), "--dir", str(allow)]) == 0
    capsys.readouterr()
    assert main(["keys", "allow", str(tmp_path / "b" / "console.key"), "--dir", str(allow)]) == 2
    assert "--name" in capsys.readouterr().err
    assert main(["keys", "allow", str(tmp_path / "b" / "console.key"), "--dir", str(allow), "--name", "console-b"]) == 0
    assert sorted(load_allow_list(allow).values()) == ["console", "console-b"]


def test_keys_list_of_missing_directory_is_a_clear_error(tmp_path, capsys):
    assert main(["keys", "list", "--dir", str(tmp_path / "nope")]) == 2
    assert "does not exist" in capsys.readouterr().err


def test_keys_allow_without_a_role_warns_that_the_key_is_a_dealer(tmp_path, capsys):
    """A key without a role is a dealer's (the documented default, kept); `keys allow` says so when no
    role was given, and points a display board at --role display, which is read-only."""
    from shoed.net.curve import key_role

    for name in ("board-1", "board-2"):
        main(["keys", "new", name, "--dir", str(tmp_path / "client")])
    allow = tmp_path / "allow"
    capsys.readouterr()
    assert main(["keys", "allow", str(tmp_path / "client" / "board-1.key"), "--dir", str(allow)]) == 0
    said = capsys.readouterr()
    assert "allowed board-1 as dealer" in said.out
    assert said.err == ("warning: no --role given: board-1 is allowed as a dealer (it may deal, confirm and "
                        "correct); give a display board --role display\n")
    assert main(["keys", "allow", str(tmp_path / "client" / "board-2.key"), "--dir", str(allow),
                 "--role", "display"]) == 0
    said = capsys.readouterr()
    assert "allowed board-2 as display" in said.out and said.err == ""
    assert key_role(allow / "board-2.key") == "display"


def test_one_key_in_two_allow_list_files_is_refused_naming_both(tmp_path, capsys):
    main(["keys", "new", "pit", "--dir", str(tmp_path / "client")])
    allow = tmp_path / "allow"
    assert main(["keys", "allow", str(tmp_path / "client" / "pit.key"), "--dir", str(allow), "--role", "pit"]) == 0
    (allow / "zz-old-copy.key").write_text((allow / "pit.key").read_text())
    capsys.readouterr()
    assert main(["keys", "list", "--dir", str(allow)]) == 2
    assert capsys.readouterr().err.strip().endswith(
        f"allow-list: the same public key is in {allow / 'pit.key'} and {allow / 'zz-old-copy.key'}; "
        "remove one of them")


def test_an_allow_list_others_may_write_is_refused(tmp_path, capsys):
    import os

    main(["keys", "new", "pit", "--dir", str(tmp_path / "client")])
    allow = tmp_path / "allow"
    assert main(["keys", "allow", str(tmp_path / "client" / "pit.key"), "--dir", str(allow)]) == 0
    assert stat.S_IMODE(allow.stat().st_mode) & 0o022 == 0  # made so
    for path, mode in ((allow, 0o777), (allow, 0o775), (allow / "pit.key", 0o666)):
        was = stat.S_IMODE(path.stat().st_mode)
        os.chmod(path, mode)
        capsys.readouterr()
        assert main(["keys", "list", "--dir", str(allow)]) == 2
        err = capsys.readouterr().err
        assert f"{path} is writable by others (mode {mode:o}); chmod go-w it" in err and err.count("\n") == 1, err
        os.chmod(path, was)
    assert main(["keys", "list", "--dir", str(allow)]) == 0


def test_keys_allow_refuses_a_name_that_is_a_path(tmp_path, capsys):
    main(["keys", "new", "j1", "--dir", str(tmp_path / "client")])
    allow = tmp_path / "deep" / "allow"
    for name in ("../esc", str(tmp_path / "abs"), "a b", "x.key"):
        capsys.readouterr()
        assert main(["keys", "allow", str(tmp_path / "client" / "j1.key"), "--dir", str(allow), "--name", name,
                     "--role", "pit"]) == 2
        err = capsys.readouterr().err
        assert err.count("\n") == 1 and "a key name is letters, digits" in err, err
    assert not (tmp_path / "deep" / "esc.key").exists() and not (tmp_path / "abs.key").exists()
    assert not allow.exists() or list(allow.iterdir()) == []


def test_keys_allow_never_writes_through_a_link_at_a_temporary_name(tmp_path, capsys):
    main(["keys", "new", "j1", "--dir", str(tmp_path / "client")])
    allow = tmp_path / "allow"
    allow.mkdir()
    victim = tmp_path / "victim.txt"
    victim.write_text("kept\n")
    (allow / ".j1.key.tmp").symlink_to(victim)
    assert main(["keys", "allow", str(tmp_path / "client" / "j1.key"), "--dir", str(allow), "--role", "pit"]) == 0
    assert victim.read_text() == "kept\n"
    assert (allow / "j1.key").is_file() and not (allow / "j1.key").is_symlink()
    assert stat.S_IMODE((allow / "j1.key").stat().st_mode) == 0o644


def test_the_daemons_keys_under_umask_000_are_no_one_elses_to_write(tmp_path):
    import os

    from shoed.net.keys import ensure_server_keys

    key_dir = tmp_path / "made" / "keys"
    old = os.umask(0)
    try:
        ensure_server_keys(key_dir, local_console=True)
    finally:
        os.umask(old)
    for path in (tmp_path / "made", key_dir, key_dir / "clients", key_dir / "clients" / "local-console.key",
                 key_dir / "server.key"):
        assert stat.S_IMODE(path.stat().st_mode) & 0o022 == 0, (path, oct(path.stat().st_mode))
    assert stat.S_IMODE((key_dir / "clients" / "local-console.key").stat().st_mode) == 0o644
    assert stat.S_IMODE((key_dir / "server.key_secret").stat().st_mode) == 0o600
    assert list(load_allow_list(key_dir / "clients").values()) == ["local-console"]


def test_keys_journal_refuses_a_table_id_the_daemon_refuses(tmp_path, capsys):
    assert main(["keys", "journal", "--journal", str(tmp_path / "j"), "--table", "t.1",
                 "--verify-key", str(tmp_path / "vk")]) == 2
    assert "table id must be 1-64 letters, digits, '_' or '-' (no dot), not 't.1'" in capsys.readouterr().err
    assert list(tmp_path.iterdir()) == []


def test_keys_journal_prints_the_verify_key_on_stdout_only_and_never_writes_it(tmp_path, capsys, monkeypatch):
    # `--verify-key -`: the key alone on stdout (a key file as `journal verify` reads it), the lines
    # about it on stderr; no file of it anywhere on the box.
    from shoed.journal import Journal, verify
    from shoed.journal.seal import Keys, SealState, read_verify_key

    monkeypatch.chdir(tmp_path)
    j = tmp_path / "j"
    assert main(["keys", "journal", "--journal", str(j), "--table", "t1", "--verify-key", "-"]) == 0
    out, err = capsys.readouterr()
    assert len(out.splitlines()) == 1 and len(out.strip()) == 64
    verify_key = read_verify_key(out.encode(), "stdout")
    assert "printed on stdout only" in err and "warning" not in err
    assert sorted(p.name for p in tmp_path.rglob("*")) == ["j", "t1.seal"]
    assert SealState.from_bytes((j / "t1.seal").read_bytes(), "state").epoch == 0
    with Journal(j, "t1") as journal:
        journal.open_shoe("S1")
        journal.append({"kind": "reading"})
    assert verify(j, Keys(verify_key=verify_key)).ok

    assert main(["keys", "journal", "--journal", str(tmp_path / "k"), "--table", "t1", "--verify-key", "-",
                 "--json"]) == 0
    made = json.loads(capsys.readouterr().out)
    assert made["verify_key_file"] is None and len(bytes.fromhex(made["verify_key"])) == 32
    assert made["seal_file"] == str(tmp_path / "k" / "t1.seal")


def test_keys_journal_warns_of_a_verify_key_file_on_the_boxs_disk(tmp_path, capsys):
    assert main(["keys", "journal", "--journal", str(tmp_path / "j"), "--table", "t1",
                 "--verify-key", str(tmp_path / "verify.key")]) == 0
    out, err = capsys.readouterr()
    assert "verify key:" in out and (tmp_path / "verify.key").stat().st_mode & 0o777 == 0o600
    warning = [line for line in err.splitlines() if line.startswith("warning:")]
    assert len(warning) == 1 and "deleting it does not erase it" in warning[0] and "--verify-key -" in warning[0]
