"""The rules engine: cards, rulesets, coups, shoes, misdeals, exact odds and roads.

Pure: no I/O beyond reading the packaged ruleset files, no clock.
"""
