"""The witness deployed as docs/witness.md and systemd/shoed-witness.service say can run: its user is
made, its secret key is given to that user, and every table is named with its own server key (each
table's box makes its own key pair), in a form `shoed witness` takes."""

from __future__ import annotations

import re
from pathlib import Path

from shoed.commands.witness import parse_table
from shoed.net.curve import create_key_pair

ROOT = Path(__file__).resolve().parent.parent
UNIT = (ROOT / "systemd" / "shoed-witness.service").read_text()
DOC = (ROOT / "docs" / "witness.md").read_text()


def _unit_values() -> dict[str, str]:
    return dict(line.split("=", 1) for line in UNIT.splitlines() if "=" in line and not line.startswith("#"))


def _tables_examples() -> list[str]:
    """Every example value of SHOED_WITNESS_TABLES, in the unit's comments and in witness.md."""
    found = re.findall(r"SHOED_WITNESS_TABLES=(\S.*)$", UNIT + "\n" + DOC, flags=re.MULTILINE)
    return [value for value in found if not value.startswith("$")]


def test_the_units_user_is_made_and_owns_the_witness_key():
    user = _unit_values()["User"]
    assert _unit_values().get("DynamicUser") == "no"
    assert re.search(rf"^sudo useradd --system .*\b{re.escape(user)}$", DOC, flags=re.MULTILINE)
    secret = re.search(r"--key (\S+)", _unit_values()["ExecStart"]).group(1)
    assert f"sudo chown {user}: {secret}" in DOC


def test_every_table_in_the_examples_has_its_own_server_key(tmp_path):
    assert "--server-key" not in _unit_values()["ExecStart"]  # no one key for every table
    examples = _tables_examples()
    assert len(examples) >= 2  # the unit's and the doc's
    _, secret, _ = create_key_pair(tmp_path, "witness")
    for example in examples:
        specs = example.split()
        assert len(specs) >= 2
        files = [re.search(r",server-key=([^,]+)", spec).group(1) for spec in specs]
        assert len(set(files)) == len(files), example
        for spec, name in zip(specs, files):
            local = tmp_path / "tables" / Path(name).stem / "server.key"
            if not local.exists():
                create_key_pair(local.parent, "server")
            local = str(local)
            feed = parse_table(spec.replace(name, local), str(secret), None)
            assert feed.curve is not None and feed.table == spec.split("=", 1)[0]
