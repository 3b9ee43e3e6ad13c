"""`shoed odds --remaining`: counts are written in the ASCII digits 0-9, as a card is written in ASCII
only. Another script's digits (Arabic-Indic, fullwidth, superscript) are refused in one line, exit 2,
never read as the number they stand for."""

from __future__ import annotations

import pytest

from shoed.cli import main

RANKS = ["3", "1", "1", "1", "1", "1", "1", "1", "1", "1", "1", "1", "1"]
VALUES = ["0=4", "1=3", "2=1", "3=1", "4=1", "5=1", "6=1", "7=1", "8=1", "9=1"]


@pytest.mark.parametrize("spec, ascii, written", [
    (",".join(["\u0663", *RANKS[1:]]), ",".join(RANKS), "\u0663"),  # ٣, Arabic-Indic three
    (",".join(["\uff13", *RANKS[1:]]), ",".join(RANKS), "\uff13"),  # ３, fullwidth three
    (",".join([*RANKS[:12], "1\u00a0"]), ",".join([*RANKS[:12], "1 "]), "1\u00a0"),  # a no-break space
    (",".join([*VALUES[:9], "9=\u0661"]), ",".join(VALUES), "9=\u0661"),  # 9=١
])
def test_a_count_in_other_digits_is_refused_in_one_line(capsys, spec, ascii, written):
    assert main(["odds", "--ruleset", "punto-banco", "--json", "--remaining", ascii]) == 0
    out, _ = capsys.readouterr()
    assert '"cards": 15' in out
    assert main(["odds", "--ruleset", "punto-banco", "--remaining", spec]) == 2
    out, err = capsys.readouterr()
    assert out == "" and err.count("\n") == 1, err
    assert err.startswith(f"shoed: --remaining: {written!r}: counts are written in the ASCII digits 0-9"), err
