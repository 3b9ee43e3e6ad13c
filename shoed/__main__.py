"""`python -m shoed` is the same as the `shoed` command."""

from shoed.cli import main

raise SystemExit(main())
