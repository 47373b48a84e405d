"""``python -m tether``.

``-m`` puts the current folder first on the import path; an editor or a person may start
``python -m tether serve`` in a cloned project, whose ``json.py`` or ``pygls.py`` would then
run in place of the real ones. So the folder is taken off the path before anything else is
imported (unless it is where this very package was found: a checkout run from its own
folder). What the interpreter imported before this line — ``tether`` itself and what ``-m``
needs (``importlib``) — cannot be helped here: in a folder you do not trust, start the
``tether`` console script (its own folder goes on the path, not the current one) or
``python -I -m tether``, as Tether does for every interpreter it starts.
"""

import os
import sys

if not sys.flags.safe_path and sys.path and sys.path[0] in ("", os.getcwd()):
    here = os.path.dirname(os.path.dirname(os.path.realpath(__file__)))
    if os.path.realpath(sys.path[0] or os.curdir) != here:
        del sys.path[0]

from .cli import main

raise SystemExit(main())
