"""A shoe's report as one self-contained HTML page: the board as inline SVG, the figures as tables.

Pure: `report_html(summary)` returns the page's text. Nothing is fetched: no
script, no stylesheet, no font, no image from elsewhere, so the page can be
archived with a surveillance report and opened anywhere. Every value written
into the page goes through `_h` (html.escape, quotes included). Every figure sits
in a cell with a `data-stat` (counts) or `data-recon` (reconciliation)
attribute, so a program can read the page back.
"""

from __future__ import annotations

from html import escape

from shoed.display.board import Board, Circle, Label, Line, Rect, scoreboard
from shoed.display.summary import ShoeSummary

FONT = "DejaVu Sans, Helvetica, Arial, sans-serif"


def _h(value: object) -> str:
    """Any value written into the page, numbers too: escaped, quotes included (the one way a value
    from the journal gets into the page)."""
    return escape(str(value), quote=True)


def _n(value: float) -> str:
    return f"{value:.2f}".rstrip("0").rstrip(".")


def svg(board: Board) -> str:
    """The board as an SVG element."""
    out = [
        f'<svg xmlns="http://www.w3.org/2000/svg" width="{_h(board.width)}" height="{_h(board.height)}" '
        f'viewBox="0 0 {_h(board.width)} {_h(board.height)}" font-family="{_h(FONT)}" role="img">',
        f'<rect width="100%" height="100%" fill="{_h(board.background)}"/>',
    ]
    for s in board.shapes:
        if isinstance(s, Rect):
            out.append(f'<rect x="{_n(s.x)}" y="{_n(s.y)}" width="{_n(s.w)}" height="{_n(s.h)}" '
                       f'fill="{_h(s.fill or "none")}" stroke="{_h(s.stroke or "none")}" stroke-width="{_n(s.width)}"/>')
        elif isinstance(s, Line):
            out.append(f'<line x1="{_n(s.x1)}" y1="{_n(s.y1)}" x2="{_n(s.x2)}" y2="{_n(s.y2)}" '
                       f'stroke="{_h(s.stroke)}" stroke-width="{_n(s.width)}" stroke-linecap="round"/>')
        elif isinstance(s, Circle):
            out.append(f'<circle cx="{_n(s.cx)}" cy="{_n(s.cy)}" r="{_n(s.r)}" fill="{_h(s.fill or "none")}" '
                       f'stroke="{_h(s.stroke or "none")}" stroke-width="{_n(s.width)}"/>')
        elif isinstance(s, Label):
            if s.anchor == "middle":
                place = f'x="{_n(s.x)}" y="{_n(s.y)}" text-anchor="middle" dominant-baseline="central"'
            else:
                place = f'x="{_n(s.x)}" y="{_n(s.y)}" dominant-baseline="hanging"'
            weight = ' font-weight="bold"' if s.bold else ""
            out.append(f'<text {place} font-size="{_n(s.size)}" fill="{_h(s.fill)}"{weight}>{_h(s.text)}</text>')
    out.append("</svg>")
    return "\n".join(out)


STYLE = """
body { font-family: FONT; color: #212121; margin: 24px; background: #fff; }
h1 { font-size: 22px; margin: 0 0 4px; } h2 { font-size: 17px; margin: 24px 0 8px; }
p.sub { color: #616161; margin: 0 0 16px; }
.board { overflow-x: auto; border: 1px solid #e0e0e0; }
table { border-collapse: collapse; margin-right: 32px; vertical-align: top; display: inline-table; }
th, td { text-align: left; padding: 3px 12px 3px 0; border-bottom: 1px solid #eee; font-size: 14px; }
th { color: #616161; font-weight: normal; }
td.num { text-align: right; font-variant-numeric: tabular-nums; }
.bad { color: #c62828; font-weight: bold; }
code { font-size: 12px; word-break: break-all; }
""".replace("FONT", FONT)


def report_html(summary: ShoeSummary) -> str:
    """The whole page."""
    board = scoreboard(summary, stats=False)
    counts = summary.counts()
    title = f"Table {summary.table} \u00b7 shoe {summary.shoe}"
    sub = " \u00b7 ".join(x for x in (
        summary.ruleset, f"{summary.decks} decks" if summary.decks else None,
        f"opened {summary.opened_utc}" if summary.opened_utc else None,
        f"closed {summary.closed_utc} ({summary.close_reason})" if summary.closed_utc else "not closed",
    ) if x)
    rows = "\n".join(
        f'<tr><th>{_h(label)}</th><td class="num" data-stat="{_h(key)}">{_h(counts[key])}</td></tr>'
        for key, label in (
            ("coups", "Coups dealt"), ("results", "Results"), ("banker", "Banker"), ("player", "Player"),
            ("tie", "Tie"), ("banker_pairs", "Banker pairs"), ("player_pairs", "Player pairs"),
            ("naturals", "Naturals"), ("voids", "Voids"), ("misdeals", "Misdeals"),
            ("misdeals_corrected", "Misdeals corrected"), ("burned", "Burned"),
        )
    )
    rec = summary.reconciliation
    if rec is None:
        recon = '<p class="bad">No reconciliation: the shoe is not closed in this journal.</p>'
    else:
        recon_rows = []
        for key in ("balanced", "capacity", "seen", "in_coups", "in_void_coups", "burned", "discarded",
                    "left_in_shoe", "accounted", "unaccounted", "coups"):
            value = rec.get(key)
            shown = ("yes" if value else "NO") if key == "balanced" else value
            bad = ' class="num bad"' if (key == "balanced" and not value) or (key == "unaccounted" and value) \
                else ' class="num"'
            recon_rows.append(f'<tr><th>{_h(key.replace("_", " "))}</th>'
                              f'<td{bad} data-recon="{_h(key)}">{_h(shown)}</td></tr>')
        excess = ", ".join(f"{k} x{v}" for k, v in (rec.get("excess") or {}).items()) or "none"
        recon_rows.append(f'<tr><th>foreign (excess)</th><td data-recon="excess">{_h(excess)}</td></tr>')
        recon = "<table>\n" + "\n".join(recon_rows) + "\n</table>"
    voids = "".join(f"<tr><td class=num>{_h(v.coup)}</td><td>{_h(v.reason)}</td><td>{_h(v.who)}</td>"
                    f"<td>{_h(v.utc or '')}</td></tr>" for v in summary.voids)
    misdeals = "".join(
        f"<tr><td class=num>{_h(m.coup)}</td><td>{_h(m.kind)}</td><td>{_h(m.card or '')}</td>"
        f"<td>{_h(m.correction)}</td><td>{_h(m.corrected or 'not corrected')}</td>"
        f"<td>{_h(m.corrected_by or '')}</td><td>{_h(m.utc or '')}</td><td>{_h(m.corrected_utc or '')}</td></tr>"
        for m in summary.misdeals
    )
    alarms = "".join(f'<tr><th>{_h(name)}</th><td class="num" data-alarm="{_h(name)}">{_h(n)}</td></tr>'
                     for name, n in summary.alarms)
    p = summary.provenance
    notes = "".join(f'<p class="bad">{_h(n)}</p>' for n in summary.notes)
    key = f" (records sealed with {summary.key})" if summary.key else ""
    return f"""<!DOCTYPE html>
<html lang="en">
<head>
<meta charset="utf-8">
<title>{_h(title)}</title>
<style>{STYLE}</style>
</head>
<body>
<h1>{_h(title)}</h1>
<p class="sub">{_h(sub)}</p>
{notes}
<div class="board">
{svg(board)}
</div>
<h2>Statistics</h2>
<table>
{rows}
</table>
<h2>Reconciliation</h2>
{recon}
<h2>Voids</h2>
{"<table><tr><th>coup</th><th>reason</th><th>voided by</th><th>time (UTC)</th></tr>" + voids + "</table>" if voids else "<p>none</p>"}
<h2>Misdeals</h2>
{"<table><tr><th>coup</th><th>kind</th><th>card</th><th>rule</th><th>done</th><th>by</th><th>found</th><th>corrected</th></tr>" + misdeals + "</table>"
 if misdeals else "<p>none</p>"}
<h2>Alarms raised</h2>
{"<table>" + alarms + "</table>" if alarms else "<p>none</p>"}
<h2>Journal</h2>
<p>{_h(p.describe().capitalize())} ({_h(p.records)} steps), events seq
{_h(summary.seq[0])}&ndash;{_h(summary.seq[1])}. Every record's hash and link was checked as it was read{_h(key)}. Hash of the shoe's last record: <code data-hash="last">{_h(p.last_hash)}</code></p>
</body>
</html>
"""
