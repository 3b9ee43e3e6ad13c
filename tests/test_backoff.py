"""The one back-off rule every retrying part of shoed uses (`shoed.backoff`)."""

from __future__ import annotations

import pytest

from shoed.backoff import Backoff
from shoed.drivers import DriverError, open_driver


def test_waits_double_from_first_to_most_and_a_success_starts_again() -> None:
    backoff = Backoff(0.2, 5.0)
    assert [backoff.failed() for _ in range(7)] == [0.2, 0.4, 0.8, 1.6, 3.2, 5.0, 5.0]
    assert backoff.failures == 7
    backoff.succeeded()
    assert backoff.failures == 0
    assert backoff.failed() == 0.2


def test_a_source_failing_for_days_waits_the_most_and_no_more() -> None:
    backoff = Backoff(0.1, 2.0)
    for _ in range(100_000):  # a shoe unplugged over a weekend, tried every two seconds
        wait = backoff.failed()
    assert wait == 2.0


@pytest.mark.parametrize(("first", "most"), [(0.0, 1.0), (-0.1, 1.0), (2.0, 1.0)])
def test_a_back_off_that_would_not_wait_or_would_shrink_is_refused(first: float, most: float) -> None:
    with pytest.raises(ValueError, match="first <= most"):
        Backoff(first, most)


def test_a_link_driver_names_its_back_off_options_when_they_disagree() -> None:
    with pytest.raises(DriverError, match=r"^backoff_initial \(3\) must be above 0 and at most backoff_max \(1\)$"):
        open_driver("beetek", "/dev/null", backoff_initial=3, backoff_max=1)
