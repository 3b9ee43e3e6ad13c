"""`python -m shoed` is the same as the `shoed` command."""

try:
    from shoed.cli import main
except KeyboardInterrupt:  # Ctrl-C while the command line is still loading: one line, not a traceback
    import sys

    print("shoed: interrupted", file=sys.stderr)
    raise SystemExit(130) from None

raise SystemExit(main())
