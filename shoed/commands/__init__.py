"""Subcommands of `shoed`: one module each, discovered by `shoed.cli`.

A module defines `register(subparsers)` which adds its parser and sets
`func` to a callable taking the parsed arguments and returning an exit code.
Raise `shoed.cli.CommandError` for a one-line error message.
"""
