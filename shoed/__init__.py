"""shoed: the table-side daemon of a baccarat table.

It reads every card the dealer draws from an electronic shoe, checks it against
the drawing rules of the table's game, flags misdeals and publishes coup events.
"""

__version__ = "0.1.0"
