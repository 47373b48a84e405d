"""The built-in read-only command rules (on unless the user config turns them off).

They allow commands that only read, and only inside the workspace: no argument may be
computed by the shell, absolute, under ``~`` or climb with ``..`` (``cat ~/.ssh/id_rsa``
would send a key to the model), and the options with which these programs write or run
other programs (``git diff --output``, ``--ext-diff``, ``--textconv``, ``rg --pre``) are
never allowed by them. Git accepts abbreviated long options, so the prefixes are short.
"""

from __future__ import annotations

from tether_protocol import Rule

GIT_WRITING = ("--o", "--ex", "--te")

BUILTIN_LIMITS: dict[str, tuple[str, ...]] = {
    "ls *": (),
    "cat *": (),
    "head *": (),
    "tail *": (),
    "wc *": (),
    "grep *": (),
    "rg *": ("--pre",),
    "pwd": (),
    "git status *": GIT_WRITING,
    "git diff *": GIT_WRITING,
    "git log *": GIT_WRITING,
    "git show *": GIT_WRITING,
}
"""Pattern → argument prefixes it never allows."""

BUILTIN_RULES: tuple[Rule, ...] = tuple(
    Rule(tool="bash", pattern=p, decision="allow", scope="builtin") for p in BUILTIN_LIMITS
)


def confined(argument: str) -> bool:
    """An argument of a built-in rule's command that stays in the workspace."""
    if argument.startswith(("/", "~")) or "=/" in argument or "=~" in argument:
        return False
    return ".." not in argument.replace("\\", "/").split("/")
