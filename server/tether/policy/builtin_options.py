"""The options each built-in read-only command may take: an allow-list.

Listed are the options (GNU coreutils 9, GNU grep 3, ripgrep 14, git 2.4x) that neither run a
program, write a file, follow links while walking, nor read paths the rules cannot see. Left
out, on purpose: ``ls -L``/``--dereference`` and ``rg -L``/``--follow`` (walk through links),
``grep -R``/``--dereference-recursive`` (follows every link, where ``-r`` follows only those
named on the command line, which are checked), ``tail -f`` and its kin (never ends),
``wc --files0-from`` (reads names from a file and prints them in its errors: a file's
content), ``rg --pre``/``--pre-glob`` and ``-z``/``--search-zip`` (run programs),
``rg --hostname-bin`` (runs one), git's ``--output`` (writes), ``--ext-diff`` and
``--textconv`` (run configured programs), ``--no-index`` (compares any two files),
``-O`` (reads an order file), ``--show-signature`` and ``%G`` formats (run gpg), ``-L``
(ranges of a file). Only full names count: an abbreviation (``--out``) is not listed, so it is
asked, whatever option git would take it for.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field


@dataclass(frozen=True, slots=True)
class ReadOptions:
    """A read-only command's allowed options, and which of its words are paths."""

    flags: str = ""
    valued: str = ""
    """Short options with a value, attached or the next word."""
    optional: str = ""
    """Short options with an optional value, attached only (``git status -uno``)."""
    long_flags: frozenset[str] = frozenset()
    long_valued: frozenset[str] = frozenset()
    long_optional: frozenset[str] = frozenset()
    numeric: bool = False
    """``-5`` is an option (``head -5``)."""
    path_values: frozenset[str] = frozenset()
    """Options (``-f``, ``--file``) whose value is a path, held to the workspace like operands."""
    pattern_first: bool = False
    """The first operand is a pattern, not a path (``grep``, ``rg``)..."""
    pattern_options: frozenset[str] = frozenset()
    """...unless one of these gives the pattern (``-e``, ``--file``) or there is none."""
    checks: Mapping[str, Callable[[str], bool]] = field(default_factory=dict)
    """Options whose value must pass a check (``--format`` without ``%G``)."""


def _longs(*names: str) -> frozenset[str]:
    return frozenset(f"--{n}" for n in names)


HELP = ("help", "version")


def _no_signature(value: str) -> bool:
    """A git format that does not verify signatures (``%G?``, ``%GS``, … run gpg)."""
    return "%G" not in value


LS = ReadOptions(
    flags="aAbBcCdDfFgGhHiklmnNopqQrRsStuUvxXZ1",
    valued="ITw",
    long_flags=_longs(
        *("all", "almost-all", "author", "escape", "ignore-backups", "directory", "dired"),
        *("file-type", "full-time", "group-directories-first", "no-group", "human-readable"),
        *("si", "dereference-command-line", "dereference-command-line-symlink-to-dir", "inode"),
        *("kibibytes", "literal", "numeric-uid-gid", "hide-control-chars", "show-control-chars"),
        *("quote-name", "reverse", "recursive", "size", "context", "zero", *HELP),
    ),
    long_valued=_longs(
        *("block-size", "format", "hide", "ignore", "indicator-style", "quoting-style", "sort"),
        *("time", "time-style", "tabsize", "width"),
    ),
    long_optional=_longs("color", "classify", "hyperlink"),
)
CAT = ReadOptions(
    flags="AbeEnstTuv",
    long_flags=_longs(
        *("show-all", "number-nonblank", "show-ends", "number", "squeeze-blank", "show-tabs"),
        *("show-nonprinting", *HELP),
    ),
)
HEAD_TAIL = ReadOptions(
    flags="qvz",
    valued="cn",
    long_flags=_longs("quiet", "silent", "verbose", "zero-terminated", *HELP),
    long_valued=_longs("bytes", "lines"),
    numeric=True,
)
WC = ReadOptions(
    flags="cmlLw",
    long_flags=_longs("bytes", "chars", "lines", "max-line-length", "words", *HELP),
    long_valued=_longs("total"),
)
GREP = ReadOptions(
    flags="EFGPyivwxcLloqsbHnhTZzaIrUV",
    valued="efmABCdD",
    long_flags=_longs(
        *("extended-regexp", "fixed-strings", "basic-regexp", "perl-regexp", "ignore-case"),
        *("no-ignore-case", "invert-match", "word-regexp", "line-regexp", "count"),
        *("files-without-match", "files-with-matches", "only-matching", "quiet", "silent"),
        *("no-messages", "byte-offset", "with-filename", "no-filename", "line-number"),
        *("initial-tab", "null", "null-data", "text", "recursive", "line-buffered", "binary"),
        *("no-group-separator", *HELP),
    ),
    long_valued=_longs(
        *("regexp", "file", "max-count", "after-context", "before-context", "context", "label"),
        *("binary-files", "directories", "devices", "include", "exclude", "exclude-dir"),
        *("exclude-from", "group-separator"),
    ),
    long_optional=_longs("color", "colour"),
    numeric=True,
    path_values=frozenset({"-f", "--file", "--exclude-from"}),
    pattern_first=True,
    pattern_options=frozenset({"-e", "-f", "--regexp", "--file"}),
    checks={
        "-d": lambda v: v in ("read", "skip", "recurse"),
        "--directories": lambda v: v in ("read", "skip", "recurse"),
    },
)
RG = ReadOptions(
    flags="abcFHhIilNnopPqSsUuvVwx0",
    valued="ABCefgjmMrtTdE",
    long_flags=_longs(
        *("text", "byte-offset", "count", "count-matches", "fixed-strings", "with-filename"),
        *("no-filename", "ignore-case", "files-with-matches", "files-without-match"),
        *("no-line-number", "line-number", "only-matching", "pretty", "pcre2", "quiet"),
        *("smart-case", "case-sensitive", "multiline", "multiline-dotall", "unrestricted"),
        *("invert-match", "word-regexp", "line-regexp", "null", "null-data", "column"),
        *("no-column", "heading", "no-heading", "hidden", "no-hidden", "files", "json"),
        *("stats", "trim", "vimgrep", "passthru", "no-ignore", "no-ignore-dot"),
        *("no-ignore-exclude", "no-ignore-files", "no-ignore-global", "no-ignore-parent"),
        *("no-ignore-vcs", "no-require-git", "ignore-file-case-insensitive"),
        *("glob-case-insensitive", "no-messages", "no-config", "one-file-system", "crlf"),
        *("no-crlf", "mmap", "no-mmap", "binary", "no-binary", "block-buffered"),
        *("line-buffered", "no-unicode", "auto-hybrid-regex", "type-list"),
        *("max-columns-preview", "include-zero", "sort-files", "debug", "trace", *HELP),
    ),
    long_valued=_longs(
        *("after-context", "before-context", "context", "regexp", "file", "glob", "iglob"),
        *("threads", "max-count", "max-columns", "replace", "type", "type-not", "type-add"),
        *("type-clear", "max-depth", "encoding", "engine", "sort", "sortr", "max-filesize"),
        *("colors", "color", "context-separator", "field-context-separator"),
        *("field-match-separator", "path-separator", "regex-size-limit", "dfa-size-limit"),
        "ignore-file",
    ),
    path_values=frozenset({"-f", "--file", "--ignore-file"}),
    pattern_first=True,
    pattern_options=frozenset({"-e", "-f", "--regexp", "--file", "--files", "--type-list"}),
)

DIFF_LONG_FLAGS = _longs(
    *("patch", "no-patch", "raw", "patch-with-raw", "numstat", "shortstat", "summary"),
    *("patch-with-stat", "name-only", "name-status", "full-index", "binary", "minimal"),
    *("patience", "histogram", "no-renames", "rename-empty", "no-rename-empty", "check"),
    *("text", "ignore-space-change", "ignore-all-space", "ignore-blank-lines"),
    *("ignore-space-at-eol", "ignore-cr-at-eol", "function-context", "exit-code", "quiet"),
    *("no-ext-diff", "no-textconv", "no-color", "no-color-moved", "no-prefix"),
    *("default-prefix", "ita-invisible-in-index", "ita-visible-in-index", "pickaxe-all"),
    *("pickaxe-regex", "find-copies-harder", "irreversible-delete", "indent-heuristic"),
    *("no-indent-heuristic", "compact-summary", "no-stat", *HELP),
)
DIFF_LONG_VALUED = _longs(
    *("unified", "diff-algorithm", "anchored", "inter-hunk-context", "diff-filter"),
    *("src-prefix", "dst-prefix", "line-prefix", "word-diff-regex", "color-moved-ws"),
    *("ws-error-highlight", "skip-to", "rotate-to", "find-object", "output-indicator-new"),
    *("output-indicator-old", "output-indicator-context", "stat-width", "stat-name-width"),
    *("stat-count", "stat-graph-width", "ignore-matching-lines"),
)
DIFF_LONG_OPTIONAL = _longs(
    *("abbrev", "break-rewrites", "find-renames", "find-copies", "dirstat", "stat"),
    *("relative", "submodule", "ignore-submodules", "color", "word-diff", "color-words"),
    *("color-moved",),
)
DIFF_FLAGS = "pusRabwWDz"
DIFF_VALUED = "USGIl"
DIFF_OPTIONAL = "MCBX"

GIT_STATUS = ReadOptions(
    flags="sbvz",
    optional="u",
    long_flags=_longs(
        *("short", "branch", "show-stash", "long", "verbose", "no-column", "ahead-behind"),
        *("no-ahead-behind", "renames", "no-renames", "null", *HELP),
    ),
    long_optional=_longs(
        "porcelain", "untracked-files", "ignore-submodules", "ignored", "column", "find-renames"
    ),
)
GIT_DIFF = ReadOptions(
    flags=DIFF_FLAGS,
    valued=DIFF_VALUED,
    optional=DIFF_OPTIONAL,
    long_flags=DIFF_LONG_FLAGS | _longs("cached", "staged", "merge-base"),
    long_valued=DIFF_LONG_VALUED,
    long_optional=DIFF_LONG_OPTIONAL,
)
LOG_LONG_FLAGS = _longs(
    *("oneline", "all", "reflog", "graph", "no-decorate", "abbrev-commit", "no-abbrev-commit"),
    *("relative-date", "reverse", "topo-order", "date-order", "author-date-order", "follow"),
    *("full-history", "simplify-merges", "simplify-by-decoration", "left-right", "left-only"),
    *("right-only", "cherry-pick", "cherry-mark", "cherry", "boundary", "parents", "children"),
    *("merges", "no-merges", "first-parent", "exclude-first-parent-only", "all-match"),
    *("invert-grep", "regexp-ignore-case", "basic-regexp", "extended-regexp"),
    *("fixed-strings", "perl-regexp", "do-walk", "walk-reflogs", "source", "use-mailmap"),
    *("mailmap", "no-mailmap", "no-use-mailmap", "log-size", "no-notes", "no-expand-tabs"),
    *("full-diff", "cc", "dd", "remerge-diff", "no-diff-merges", "combined-all-paths"),
    *("no-max-parents", "no-min-parents", "show-pulls", "dense", "sparse"),
    *("single-worktree", "clear-decorations", "no-walk"),
)
LOG_LONG_VALUED = _longs(
    *("max-count", "skip", "since", "after", "until", "before", "author", "committer", "grep"),
    *("grep-reflog", "min-parents", "max-parents", "decorate-refs", "decorate-refs-exclude"),
    *("format", "date", "encoding", "glob", "exclude", "diff-merges", "since-as-filter"),
)
LOG_LONG_OPTIONAL = _longs(
    "branches",
    "tags",
    "remotes",
    "ancestry-path",
    "decorate",
    "pretty",
    "notes",
    "expand-tabs",
    "show-linear-break",
)
GIT_LOG = ReadOptions(
    flags=DIFF_FLAGS + "iEFPgmct",
    valued=DIFF_VALUED + "n",
    optional=DIFF_OPTIONAL,
    long_flags=DIFF_LONG_FLAGS | LOG_LONG_FLAGS,
    long_valued=DIFF_LONG_VALUED | LOG_LONG_VALUED,
    long_optional=DIFF_LONG_OPTIONAL | LOG_LONG_OPTIONAL,
    numeric=True,
    checks={"--format": _no_signature, "--pretty": _no_signature},
)

READ_ONLY: dict[str, ReadOptions] = {
    "ls *": LS,
    "cat *": CAT,
    "head *": HEAD_TAIL,
    "tail *": HEAD_TAIL,
    "wc *": WC,
    "grep *": GREP,
    "rg *": RG,
    "pwd": ReadOptions(),
    "git status *": GIT_STATUS,
    "git diff *": GIT_DIFF,
    "git log *": GIT_LOG,
    "git show *": GIT_LOG,
}
"""Each built-in read-only rule's pattern and the options its command may take."""
