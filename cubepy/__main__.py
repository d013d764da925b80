"""`python -m cubepy ...` is the `cubepy` command."""
from .cli import main

raise SystemExit(main())
