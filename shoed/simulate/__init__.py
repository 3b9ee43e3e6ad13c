"""The virtual shoe: deals real shoes by a ruleset and speaks a shoe's protocol on a real link.

Integrators without hardware, the test suite and the daemon's own checks use it
in place of a card-reading shoe. The parts, from pure to I/O:

- `dealer`: the virtual dealer (shuffle, burn, coups by the tableau, cut card,
  last coup) as a deterministic sequence of events with their ground truth;
- `faults`: fault plans (dealing faults and link noise), seeded;
- `wire`: each event as a native protocol message or a Bee-Tek token;
- `firmware`: the native protocol's shoe side (acknowledgements, repeats,
  gate, heartbeats) as a state machine fed with time;
- `link`: a pseudo-terminal or TCP server that can be unplugged;
- `shoe`: `VirtualShoe`, which runs them together in a background thread.
"""

from __future__ import annotations

from shoed.simulate.dealer import DealError, DealSetup, ShoeEvent, deal
from shoed.simulate.faults import FaultPlan, FaultPlanError
from shoed.simulate.shoe import SimulatorError, VirtualShoe

__all__ = [
    "DealError",
    "DealSetup",
    "FaultPlan",
    "FaultPlanError",
    "ShoeEvent",
    "SimulatorError",
    "VirtualShoe",
    "deal",
]
