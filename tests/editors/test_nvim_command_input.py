"""``commandInput = "ask"`` answered by the Neovim plugin: a command's password prompt
(``agent/ask``'s ``secret``) with ``vim.fn.inputsecret``, a plain question with
``vim.ui.input``, and a ``[Y/n]`` answered with Enter alone (its default); each answer typed
into the command."""

from __future__ import annotations

import hashlib

from .conftest import Nvim, call, script, tool_results

SECRET = "hunter2-s3cr3t-Zq"
DIGEST = hashlib.sha256(SECRET.encode()).hexdigest()  # the command holds no secret
PROGRAM = (
    "import getpass, hashlib; "
    "typed = hashlib.sha256(getpass.getpass('Password: ').encode()).hexdigest(); "
    f"print('matched' if typed == {DIGEST!r} else 'wrong'); "
    "print('got=' + input('Continue? '))"
)

INSTALL = 'read -p "Install? [Y/n] " x; echo "install=[${x:-Y}]"'


def test_a_password_is_typed_unseen_and_a_question_answered(nvim: Nvim) -> None:
    bash = call("bash", command=f'python3 -c "{PROGRAM}"', timeout_seconds=600)
    install = call("bash", command=INSTALL, timeout_seconds=600)
    r = nvim.run(
        "command_input",
        script({"toolCalls": [bash]}, {"toolCalls": [install]}, {"text": "done"}),
        env={"SECRET_ANSWER": SECRET},
    )
    assert r["run"]["result"]["outcome"] == "done"
    [result, installed] = tool_results(r["run"])
    assert "matched" in result["output"] and "got=yes" in result["output"], result["output"]
    assert "install=[Y]" in installed["output"], installed["output"]
    [secret] = r["secrets"]
    assert "Password: " in secret and secret.startswith("Tether asks: The command")
    plain, enter_alone = r["inputs"]
    assert "Continue? " in plain
    assert "Install? [Y/n] " in enter_alone, enter_alone
