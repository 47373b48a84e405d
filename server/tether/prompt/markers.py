"""The injection markers: patterns of text written to steer a model, and their prefilter.

Each marker has one check per language group: a regex and the words it cannot match
without, so that a plain substring scan rules most checks out before a regex runs over a
long output (a needle in a script the text does not use costs nothing). Quantifiers are
bounded and no group repeats another, so a match costs linear time in the text.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass

INVISIBLE = re.compile(
    "[\u00ad\u034f\u061c\u115f\u1160\u17b4\u17b5\u180b-\u180f\u200b-\u200f\u202a-\u202e"
    "\u2060-\u206f\u3164\ufe00-\ufe0f\ufeff\uffa0\U000e0000-\U000e0fff]"
)
"""Characters that show nothing (zero-width, joiners, bidi controls, tags, fillers)."""


@dataclass(frozen=True, slots=True)
class Check:
    """One pattern of a marker and the words it cannot match without (one of each group,
    lower-cased; the rarest group first, so that the scan stops early)."""

    pattern: re.Pattern[str]
    hints: tuple[tuple[str, ...], ...]
    scope: Callable[[str], Iterable[str]] | None = None
    """Where the pattern looks (e.g. inside HTML comments); None: the whole text."""


COMMENT_LIMIT = 2000


def comment_bodies(text: str) -> Iterator[str]:
    """The start of every HTML comment's body, found in one pass (linear in the text)."""
    start = text.find("<!--")
    while start != -1:
        end = text.find("-->", start + 4)
        stop = len(text) if end == -1 else end
        yield text[start + 4 : min(stop, start + 4 + COMMENT_LIMIT)]
        if end == -1:
            return
        start = text.find("<!--", end + 3)


_AGENT_WORDS = (
    r"\b(?:ai|agents?|assistants?|llms?|language models?|claude|gpt|chatgpt|copilot|gemini|"
    r"codex|ignore|disregard|you (?:must|should|need to))\b|do not (?:tell|mention|show|reveal)"
)


def _check(pattern: str, *hints: tuple[str, ...], flags: int = re.IGNORECASE) -> Check:
    return Check(re.compile(pattern, flags), hints)


_INSTRUCTIONS = ("instru", "istruz", "consigne", "regl", "règle", "regra", "regol", "direct")
CHECKS: dict[str, tuple[Check, ...]] = {
    "ignore-instructions": (
        _check(
            r"\b(?:ignore|disregard|forget|override)\b[^.\n]{0,40}\b(?:previous|prior|above|"
            r"earlier|all|any|your|the)\b[^.\n]{0,30}\b(?:instructions?|prompts?|rules|directions)\b",
            ("ignore", "disregard", "forget", "override"),
            ("instruction", "prompt", "rules", "direction"),
        ),
        _check(  # French, Spanish, Portuguese, Italian
            r"\b(?:ignore[zr]?|oublie[zr]?|ne tiens pas compte|ignora|ignorad|olvida|olvide|"
            r"omite|esqueça|esquece|dimentica)\b(?=[^.\n]{0,80}\b(?:précédent|antérieur|"
            r"ci-dessus|toutes|tes|vos|anterior|previa|todas|tus|sus|tuas|suas|precedent|tutte|"
            r"le tue))[^.\n]{0,40}\b(?:instructions?|consignes|"
            r"règles|directives|instrucciones|indicaciones|reglas|instruções|regras|istruzioni|"
            r"regole)\b",
            _INSTRUCTIONS + ("indicac",),
            ("ignor", "oubli", "tiens pas", "olvid", "omite", "esque", "dimentic"),
        ),
        _check(  # German
            r"\b(?:ignorier(?:e|en|t)?|vergiss|vergessen sie|missachte)\b(?=[^.\n]{0,80}"
            r"\b(?:vorherig|bisherig|obig|vorig|alle|deine|ihre))[^.\n]{0,40}"
            r"\b(?:anweisungen|anleitungen|regeln|instruktionen|vorgaben)\b",
            ("anweisung", "anleitung", "regeln", "instruktion", "vorgabe"),
            ("ignorier", "vergiss", "vergessen", "missacht"),
        ),
        _check(  # Russian
            r"(?:игнорируй|игнорируйте|забудь|забудьте|не обращай внимания)"
            r"(?=[^.\n]{0,80}(?:предыдущ|прежн|вышеуказанн|все|свои|твои))[^.\n]{0,40}"
            r"(?:инструкци|указани|правил)",
            ("игнор", "забуд", "не обращай"),
        ),
        _check(  # Chinese, Japanese
            r"(?:忽略|无视|無視|忘记|忘記|不要理会|不要理會)(?=[^。.\n]{0,30}(?:之前|以前|上面|上述|"
            r"先前|所有|全部))[^。.\n]{0,20}"
            r"(?:指令|指示|说明|說明|规则|規則|提示)|(?:指示|命令)を(?:無視|忘れ)",
            ("忽略", "无视", "無視", "忘记", "忘記", "不要理", "を忘れ"),
        ),
    ),
    "new-instructions": (
        _check(
            r"\b(?:you are now|new instructions|from now on,? you|system prompt|developer mode)\b",
            ("you are now", "new instructions", "from now on", "system prompt", "developer mode"),
        ),
        _check(  # French, Spanish, Portuguese, Italian
            r"\b(?:tu es maintenant|vous êtes maintenant|désormais,? (?:tu|vous)|"
            r"nouvelles instructions|prompt système|invite système|ahora eres|"
            r"a partir de ahora,? (?:eres|tú)|nuevas instrucciones|prompt del sistema|"
            r"agora você é|prompt do sistema|ora sei|prompt di sistema)\b",
            (
                "maintenant",
                "désormais",
                "nouvelles",
                "système",
                "ahora",
                "nuevas",
                "sistema",
                "agora",
                "ora sei",
            ),
        ),  # fmt: skip
        _check(  # German
            r"\b(?:du bist jetzt|sie sind jetzt|ab jetzt bist du|neue anweisungen|"
            r"system-?prompt)\b",
            ("jetzt", "neue anweisungen", "systemprompt", "system-prompt"),
        ),
        _check(  # Russian, Chinese, Japanese
            r"теперь ты|ты теперь|новые инструкции|системн(?:ый|ого|ому) промпт|你现在是|你現在是|"
            r"从现在开始你|從現在開始你|新的指令|系统提示|系統提示|あなたは今|システムプロンプト",
            (
                "теперь",
                "новые инструкции",
                "промпт",
                "你现在是",
                "你現在是",
                "从现在开始",
                "從現在開始",
                "新的指令",
                "系统提示",
                "系統提示",
                "あなたは今",
                "システムプロンプト",
            ),
        ),  # fmt: skip
    ),
    "fake-role-markup": (
        _check(
            r"(<\|im_start\|>|<\|im_end\|>|<\|(system|assistant|user)\|>|\[/?INST\]|"
            r"</?(system|assistant|user|human)>|^[ \t]*(system|assistant|human)[ \t]*:)",
            (
                "<|",
                "inst]",
                "<system",
                "<assistant",
                "<user",
                "<human",
                "</",
                "system",
                "assistant",
                "human",
            ),
            flags=re.IGNORECASE | re.MULTILINE,
        ),  # fmt: skip
    ),
    "fake-tool-markup": (
        _check(
            r"(</?\s*tool[_-]?output\b|</?function_calls>|<invoke\b|</?tool_use>|</?tool_call>|"
            r"\"tool_calls\"\s*:)",
            ("tool", "function_calls", "<invoke"),
        ),
    ),
    "run-command-request": (
        _check(
            r"(\b(run|execute)\s+(the\s+)?(following\s+)?(shell\s+)?(command|script)\b|"
            r"\b(curl|wget)\b[^\n|]{0,200}\|\s*(ba|z)?sh\b|\brm\s+-rf\s+[/~])",
            ("run", "execute", "curl", "wget", "rm -rf"),
        ),
    ),
    "secret-request": (
        _check(
            r"\b(reveal|print|show|send|leak|exfiltrate|upload|post)\b[^.\n]{0,40}"
            r"\b(api[ _-]?keys?|secrets?|passwords?|tokens?|credentials|\.env|ssh keys?|id_rsa)\b",
            ("reveal", "print", "show", "send", "leak", "exfiltrate", "upload", "post"),
            ("api", "secret", "password", "token", "credential", ".env", "ssh", "id_rsa"),
        ),
    ),
    "approval-bypass": (
        _check(
            r"\b(auto[- ]?approve|approve (all|every)|without (asking|approval|confirmation)|"
            r"skip (the )?(approval|confirmation))\b",
            ("approve", "without asking", "without approval", "without confirmation", "skip"),
        ),
    ),
    "hidden-comment": (
        Check(  # an HTML comment (invisible once rendered) that talks to an agent
            re.compile(_AGENT_WORDS, re.IGNORECASE), (("<!--",),), scope=comment_bodies
        ),
    ),
    "hidden-text": (
        _check(  # checked only where ``INVISIBLE`` found something
            r"[\u200b\u2060-\u2064\u180e\u202a-\u202e\u2066-\u2069]"
            r"|(?<=[A-Za-z])[\u00ad\u200c\u200d\ufeff](?=[A-Za-z])"
            r"|(?<![\U0001f3f4\U000e0020-\U000e007f])[\U000e0000-\U000e007f]"
            r"|[\U000e0000-\U000e007f]{9}",
            flags=0,
        ),
    ),
}
"""Every marker and its checks: invisible characters inside words, tag characters outside an
emoji flag and bidi overrides (``hidden-text``) make text read differently to the model
than to the user."""

MARKERS: dict[str, re.Pattern[str]] = {
    name: re.compile("|".join(f"(?:{c.pattern.pattern})" for c in checks), checks[0].pattern.flags)
    for name, checks in CHECKS.items()
}
MARKERS["hidden-comment"] = re.compile(
    rf"<!--(?:(?!-->)[\s\S]){{0,{COMMENT_LIMIT}}}?(?:{_AGENT_WORDS})", re.IGNORECASE
)
"""One pattern per marker: what the checks match together (for tests and tools)."""
