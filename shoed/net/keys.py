"""The daemon's own CURVE keys, made on its first start: the server's key pair and an empty
allow-list (KEY_DIR/clients), and on a bench with the embedded default a local console key
that the allow-list lets in with the pit's role (it may void and unlock too)."""

from __future__ import annotations

import os
from pathlib import Path

from shoed.files import replace_whole
from shoed.net.curve import create_key_pair, with_role

SERVER = "server"
LOCAL_CONSOLE = "local-console"


def ensure_server_keys(key_dir: str | Path, local_console: bool = False) -> str | None:
    """Make what is missing on a first start; the server's public key when it was made now, None
    when the key pair was there already (it is never touched then). A key pair made beforehand
    with `shoed keys new server` gets its empty allow-list here too."""
    key_dir = Path(key_dir)
    clients = key_dir / "clients"
    # The allow-list is no one else's to write (shoed.net.curve.load_allow_list refuses it otherwise),
    # whatever the umask: every folder and file made here has its mode set, not the umask's.
    _make_folders(clients)
    if (key_dir / f"{SERVER}.key_secret").exists():
        return None
    _, _, public = create_key_pair(key_dir, SERVER)
    if local_console:
        public_file, _, _ = create_key_pair(key_dir, LOCAL_CONSOLE)
        text = with_role(Path(public_file).read_text(), "pit")
        replace_whole(clients / f"{LOCAL_CONSOLE}.key", text.encode("utf-8"), mode=0o644)
    return public


def _make_folders(path: Path) -> None:
    """`path` and the folders above it that are missing, each made 0755 (a umask may take bits away
    from that, never add them: a umask of 000 makes no folder anyone may write)."""
    missing = []
    while not path.exists():
        missing.append(path)
        if path.parent == path:
            break
        path = path.parent
    for folder in reversed(missing):
        try:
            os.mkdir(folder, 0o755)
        except FileExistsError:
            continue
