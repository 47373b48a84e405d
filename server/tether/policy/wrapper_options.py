"""The options of the wrappers ``wrappers.py`` reads through, and the programs it scans loosely.

Each table lists the options a wrapper takes before the command it runs, as its manual
(GNU coreutils, findutils, sudo, util-linux, bash, git) gives them; an option not listed
here makes the command's reach hidden, never a guess at where the command starts.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True, slots=True)
class Options:
    """A wrapper's options, and what comes between them and the command it runs."""

    flags: str = ""
    """Short options without a value (``-i``), clustered or not."""
    valued: str = ""
    """Short options with a value, attached (``-n5``) or the next word (``-n 5``)."""
    optional: str = ""
    """Short options with an optional value, attached only (``xargs -i{}``)."""
    long_flags: frozenset[str] = frozenset()
    long_valued: frozenset[str] = frozenset()
    """Long options with a value: ``--opt=value`` or ``--opt value``."""
    long_optional: frozenset[str] = frozenset()
    """Long options whose value, if any, is attached: ``--opt[=value]``."""
    numeric: bool = False
    """``-5``/``--5`` is an option (``nice -5``)."""
    dash: bool = False
    """A lone ``-`` is an option (``env -`` is ``env -i``)."""
    operands: int = 0
    """Words before the command (``timeout``'s duration)."""
    assignments: bool = False
    """``NAME=value`` words before the command (``env A=1 cmd``)."""
    quiet: str = ""
    quiet_long: frozenset[str] = frozenset()
    """Options with which it runs no command (``command -v``, ``ionice -p``)."""
    stdin: bool = False
    """Without a command it runs what it reads (a shell): that is hidden."""
    default: tuple[str, ...] = ()
    """What it runs without a command (``xargs`` runs ``echo``)."""
    appends: bool = False
    """It adds words of its own to the command (``xargs``: what it reads)."""


def _longs(*names: str) -> frozenset[str]:
    return frozenset(f"--{n}" for n in names)


HELP = ("help", "version")

WRAPPER_OPTIONS: dict[str, Options] = {
    "command": Options(flags="pvV", quiet="vV"),
    "builtin": Options(),
    "exec": Options(flags="cl", valued="a"),
    "nohup": Options(),
    "env": Options(
        flags="i0v",
        valued="uC",
        long_flags=_longs("ignore-environment", "null", "debug", "list-signal-handling", *HELP),
        long_valued=_longs("unset", "chdir"),
        long_optional=_longs("block-signal", "default-signal", "ignore-signal"),
        dash=True,
        assignments=True,
    ),
    "nice": Options(valued="n", long_valued=_longs("adjustment"), numeric=True),
    "timeout": Options(
        flags="v",
        valued="sk",
        long_flags=_longs("foreground", "preserve-status", "verbose"),
        long_valued=_longs("signal", "kill-after"),
        operands=1,
    ),
    "stdbuf": Options(valued="ioe", long_valued=_longs("input", "output", "error")),
    "setsid": Options(flags="cfw", long_flags=_longs("ctty", "fork", "wait")),
    "ionice": Options(
        flags="t",
        valued="cnpPu",
        long_flags=_longs("ignore"),
        long_valued=_longs("class", "classdata", "pid", "pgid", "uid"),
        quiet="pPu",
        quiet_long=_longs("pid", "pgid", "uid"),
    ),
    "time": Options(  # the bash keyword (-p) and GNU time
        flags="pavq",
        valued="fo",
        long_flags=_longs("portability", "append", "verbose", "quiet"),
        long_valued=_longs("format", "output"),
    ),
    "xargs": Options(
        flags="0prtxo",
        valued="adEILnPs",
        optional="eil",
        long_flags=_longs(
            "null", "interactive", "no-run-if-empty", "verbose", "exit", "open-tty", "show-limits"
        ),
        long_valued=_longs(
            "arg-file", "delimiter", "max-args", "max-procs", "max-chars", "process-slot-var"
        ),
        long_optional=_longs("eof", "replace", "max-lines"),
        default=("echo",),
        appends=True,
    ),
    "sudo": Options(
        flags="AbEHiKkLlnPSsVvBN",
        valued="CDghpRrtTUu",
        long_flags=_longs(
            "askpass",
            "background",
            "bell",
            "set-home",
            "login",
            "remove-timestamp",
            "reset-timestamp",
            "non-interactive",
            "preserve-groups",
            "stdin",
            "shell",
            "list",
            "validate",
            *HELP,
        ),
        long_valued=_longs(
            "close-from",
            "chdir",
            "group",
            "host",
            "prompt",
            "chroot",
            "role",
            "type",
            "command-timeout",
            "other-user",
            "user",
        ),
        long_optional=_longs("preserve-env"),
        assignments=True,
        quiet="lvVK",
        quiet_long=_longs("list", "validate", "remove-timestamp", *HELP),
        stdin=True,
    ),
    "doas": Options(flags="nLs", valued="uC", quiet="C", stdin=True),
}
"""Wrappers whose command follows their options (and operands, or assignments)."""

SHELLS = frozenset({"sh", "bash", "dash", "ash"})
"""Shells whose ``-c`` string is read with bash's grammar."""
SHELL_SHORT = frozenset("abefhkmnptuvxBCEHPTilrD")
SHELL_LONG = _longs(
    "norc",
    "noprofile",
    "login",
    "posix",
    "restricted",
    "verbose",
    "noediting",
    "debugger",
    "dump-strings",
    "dump-po-strings",
    "pretty-print",
    "protected",
    "wordexp",
    *HELP,
)
SHELL_LONG_VALUED = _longs("rcfile", "init-file")

HIDING = frozenset(
    {
        *("zsh", "ksh", "mksh", "fish", "csh", "tcsh", "pwsh", "nu", "xonsh", "elvish", "yash"),
        *("su", "runuser", "sg", "newgrp"),
    }
)
"""Programs whose commands are not read here at all: shells of another grammar (``zsh -c
'=rm x'`` runs ``rm``), and ``su``-like programs, which may run what they read from their
input."""
STDIN_FILES = frozenset({"-", "/dev/stdin", "/dev/fd/0", "/proc/self/fd/0"})
"""Script names that are the input: ``echo 'rm x' | sh /dev/stdin``."""

RUNNERS = frozenset(
    {
        *("npx", "bunx", "uvx", "pipx", "yarn", "bun", "ssh", "script", "chroot", "unshare"),
        *("nsenter", "flock", "watch", "parallel", "strace", "ltrace", "valgrind", "gdb"),
        *("taskset", "chrt", "numactl", "firejail", "bwrap", "systemd-run", "fakeroot", "proot"),
        *("torsocks", "proxychains", "proxychains4", "faketime", "xvfb-run", "dbus-run-session"),
        *("dbus-launch", "unbuffer", "rlwrap", "catchsegv", "pkexec", "caffeinate", "setpriv"),
        *("chpst", "tmux", "screen", "direnv", "dotenv", "env-cmd", "cross-env", "entr"),
        *("concurrently", "nodemon", "nix-shell", "pipenv"),
        ("uv", "run"),
        ("uv", "tool"),
        ("poetry", "run"),
        ("pdm", "run"),
        ("hatch", "run"),
        ("hatch", "env"),
        ("rye", "run"),
        ("npm", "exec"),
        ("npm", "x"),
        ("pnpm", "exec"),
        ("pnpm", "dlx"),
        ("lerna", "exec"),
        ("nx", "exec"),
        ("docker", "run"),
        ("docker", "exec"),
        ("docker", "compose"),
        ("podman", "run"),
        ("podman", "exec"),
        ("nerdctl", "run"),
        ("nerdctl", "exec"),
        ("kubectl", "exec"),
        ("kubectl", "run"),
        ("kubectl", "debug"),
        ("conda", "run"),
        ("mamba", "run"),
        ("micromamba", "run"),
        ("pixi", "run"),
        ("pixi", "exec"),
        ("mise", "exec"),
        ("mise", "x"),
        ("asdf", "exec"),
        ("rbenv", "exec"),
        ("pyenv", "exec"),
        ("nodenv", "exec"),
        ("bundle", "exec"),
        ("nix", "run"),
        ("nix", "develop"),
        ("nix", "shell"),
        ("devbox", "run"),
    }
)
"""Programs (or program and subcommand) that run a command named in their arguments, whose
own options are not listed here: every word after them may begin the command they run."""

GIT_GLOBAL = Options(
    flags="pP",
    valued="Cc",
    long_flags=_longs(
        "no-pager",
        "paginate",
        "bare",
        "no-replace-objects",
        "literal-pathspecs",
        "glob-pathspecs",
        "noglob-pathspecs",
        "icase-pathspecs",
        "no-optional-locks",
        "no-lazy-fetch",
        "no-advice",
        "html-path",
        "man-path",
        "info-path",
        *HELP,
    ),
    long_valued=_longs(
        "git-dir",
        "work-tree",
        "namespace",
        "super-prefix",
        "attr-source",
        "list-cmds",
        "config-env",
    ),
    long_optional=_longs("exec-path"),
)
"""git's options before its subcommand (``git -C . push``)."""
GIT_HIDING = _longs("config-env", "exec-path")
"""With ``-c`` too: set configuration (an alias, a pager, ``core.sshCommand``) that runs
programs, or the folder git runs its subcommands from."""
GIT_RUNNERS = frozenset(
    {"rebase", "bisect", "submodule", "difftool", "mergetool", "filter-branch", "send-email"}
)
"""git subcommands that run a command given in their arguments (``rebase -x``, ``bisect
run``, ``submodule foreach``, ``difftool -x``, ``filter-branch --tree-filter``)."""
