"""`shoed schema`: the event schema as JSON Schema."""

from __future__ import annotations

import json


def register(sub) -> None:
    p = sub.add_parser("schema", help="print the event schema (JSON Schema)")
    p.set_defaults(func=run)


def run(args) -> int:
    from shoed.table.events import json_schema

    print(json.dumps(json_schema(), indent=2))
    return 0
