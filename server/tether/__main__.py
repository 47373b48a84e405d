"""``python -m tether``."""

from .cli import main

raise SystemExit(main())
