"""Table displays: what the pit, the players and surveillance see of a table.

- `state`: the display's state as a pure fold of a snapshot and the events after it;
- `terminal`: that state drawn as a rich renderable (`shoed watch`);
- `live`: the shell of `shoed watch` (ZeroMQ client, clock, screen);
- `summary`: one shoe of a journal summed up for a surveillance report;
- `board`: the scoreboard of a shoe as shapes (circles, lines, text) on a page;
- `png`, `html`: those shapes drawn with Pillow, or as inline SVG in an HTML page (`shoed report`).

Everything but `live` and the writing in `png` is pure: no I/O, no clock.
"""
