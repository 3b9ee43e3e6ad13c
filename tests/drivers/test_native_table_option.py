"""The native drivers' `table` option: sent whole as the model of our Hello (SPEC.md §5.2), so it must be a
table id (shoed.net.wire.check_table_id: 1-64 ASCII letters, digits, '_' or '-'); anything else is a
DriverError when the driver is built, never an EncodeError (a ValueError) at open() nor a cut id."""

from __future__ import annotations

import pytest

from firmware_protocol import messages as m
from shoed.drivers import DriverError, build_driver


@pytest.mark.parametrize("table", ["\u6fb3" * 30, "t\n1", "a" * 65, "t.1", "T\u202e1"])
def test_a_table_id_that_is_not_one_is_refused_when_the_driver_is_built(table):
    with pytest.raises(DriverError, match="table"):
        build_driver("native", "loop://", table=table)


@pytest.mark.parametrize("table", ["", "t1", "a" * 64, "Macau-VIP_07"])
def test_a_table_id_is_sent_whole(table):
    driver = build_driver("native", "loop://", table=table)
    hello = driver.session.host_hello
    assert isinstance(hello, m.Hello) and hello.model == table
