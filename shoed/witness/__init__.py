"""The external witness: what a table's box alone cannot prove about its journal.

A witness off the box follows tables (`follow.py`), keeps the journal heads
they publish and the events they send in a database (`store.py`: SQLite or
PostgreSQL, one schema), and `shoed journal verify --witness URL` looks it all
up in a journal (`compare.py`) to find a deleted tail, a truncation or a
journal replaced wholesale. See docs/witness.md.
"""
