"""The documented Emacs set-up, pasted as it is into a fresh init file, in a real
``emacs -nw`` (in tmux) started as a user starts it: ``C-c T`` and ``M-x tether-chat``
open the chat and it answers.

The snippet is read from the docs (``editors/emacs/README.md`` and ``docs/editors.md``),
so what is tested is what a user copies; only ``/path/to/tether`` becomes this checkout.
"""

from __future__ import annotations

import re
import subprocess
from pathlib import Path

import pytest

from tests.providers.fakes import FakeApi, Sse, anthropic_stream, openai_stream

from .emacs_harness import PACKAGE, REPO, require_emacs, story_env
from .emacs_tmux import EmacsInTmux

DOCS = {
    "readme": (PACKAGE / "README.md", "## Set-up"),
    "editors": (REPO / "docs" / "editors.md", "## Emacs"),
}
"""Where each set-up snippet is: the file and the heading its first ``elisp`` block follows."""

PLACEHOLDER = "/path/to/tether"
READY = "setup-test: ready"


def documented_snippet(doc: str) -> str:
    """The first ``elisp`` block after the heading, as the docs show it."""
    path, heading = DOCS[doc]
    text = path.read_text()
    assert heading in text, f"{path} has no {heading!r}"
    found = re.search(r"```elisp\n(.*?)```", text[text.index(heading) :], re.S)
    assert found, f"{path}: no elisp block after {heading!r}"
    return found.group(1)


def fresh_home(tmp_path: Path, snippet: str) -> Path:
    """A home whose ``~/.emacs.d/init.el`` is the snippet with this checkout's path."""
    assert PLACEHOLDER in snippet, snippet
    init = tmp_path / "home" / ".emacs.d" / "init.el"
    init.parent.mkdir(parents=True)
    init.write_text(snippet.replace(PLACEHOLDER, str(REPO)))
    # Not the user's: the test's cue that keys typed from now on reach Emacs, and no
    # native compilation into this throw-away home (seconds of CPU in the background).
    (init.parent / "early-init.el").write_text(
        "(setq native-comp-deferred-compilation nil)\n"
        f'(add-hook (quote window-setup-hook) (lambda () (message "{READY}")))\n'
    )
    return init.parent.parent


@pytest.mark.parametrize("entry", ["C-c T", "M-x tether-chat"])
@pytest.mark.parametrize("doc", sorted(DOCS))
def test_the_documented_snippet_opens_a_working_chat(tmp_path: Path, doc: str, entry: str) -> None:
    snippet = documented_snippet(doc)
    provider = re.search(r':provider "(\w+)"', snippet)
    assert provider, snippet
    root = tmp_path / "ws"
    (root / "src").mkdir(parents=True)
    (root / "src" / "app.py").write_text("def greet(name):\n    return 'hello ' + name\n")
    subprocess.run(["git", "init", "-q", str(root)], check=True, timeout=30)
    with FakeApi() as fake:
        if provider.group(1) == "anthropic":
            fake.queue(Sse(anthropic_stream("Hello from the chat.")))
            key, url = {"ANTHROPIC_API_KEY": "sk-test"}, fake.url
        else:
            fake.queue(Sse(openai_stream("Hello from the chat.")))
            key, url = {"OPENAI_API_KEY": "sk-test"}, fake.url + "/v1"
        env = story_env(tmp_path, root, {"turns": []})
        env.update(key, HOME=str(fresh_home(tmp_path, snippet)), TETHER_BASE_URL=url)
        emacs = EmacsInTmux(
            tmp_path, None, env, command=f"{require_emacs()} -nw src/app.py", cwd=root
        )
        try:
            emacs.wait_for(READY)
            if entry == "C-c T":
                emacs.keys("C-c", "T")
            else:
                emacs.command("tether-chat")
            screen = emacs.wait_until(
                lambda s: "tether>" in s or "commandp" in s or "[No match]" in s,
                "the chat or an error",
            )
            assert "tether>" in screen, screen
            emacs.type("hi")
            emacs.keys("Enter")
            screen = emacs.wait_for("■ done · 1 step")
            assert "Hello from the chat." in screen
        finally:
            emacs.close()
    [asked] = fake.requests
    said = asked.body["messages"][-1]["content"]
    assert (said if isinstance(said, str) else "".join(part["text"] for part in said)) == "hi"
