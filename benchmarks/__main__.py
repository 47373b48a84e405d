"""``python -m benchmarks [--quick] [--only NAME,...] [--json PATH]``."""

from .runner import main

raise SystemExit(main())
