"""The terminal commands' exit statuses (a module of its own: ``tether run`` needs them
before it imports the rest of the client)."""

from __future__ import annotations

EXIT_OK = 0
EXIT_NOT_DONE = 1
EXIT_USAGE = 2
EXIT_INTERRUPTED = 130
"""128 + SIGINT, as a shell reports a program stopped by Ctrl-C."""
EXIT_PIPE_CLOSED = 141
"""128 + SIGPIPE, as a shell reports ``git log | head -1``."""
