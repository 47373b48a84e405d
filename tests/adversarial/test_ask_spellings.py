"""``ask_user``'s question and choices, any spelling: what each front sends a person is the
display sanitiser's text (nothing raw that a screen would act on), and the answer a person
picks is the model's own choice again."""

from __future__ import annotations

from hypothesis import assume, given, settings
from hypothesis import strategies as st

from tether.acp.ask import elicitation, elicited
from tether.lsp.ask import ask_params, asked_answer
from tether.text.display import shown
from tether.tools.ask import Question

HOSTILE = st.text(
    alphabet=st.one_of(
        st.characters(codec="utf-8"),
        st.sampled_from(["\x1b", "\r", "\n", "\u202e", "\u2066", "\u200b", "\x9b", "\U000e0041"]),
    ),
    min_size=1,
    max_size=300,
)
CHOICES = st.lists(
    HOSTILE.filter(str.strip).map(lambda c: c[:200]), min_size=1, max_size=10, unique=True
)


@settings(max_examples=300, deadline=None)
@given(question=HOSTILE, choices=CHOICES, free_text=st.booleans(), data=st.data())
def test_what_a_person_sees_is_shown_text_and_a_pick_is_the_models_choice(
    question: str, choices: list[str], free_text: bool, data: st.DataObject
) -> None:
    asked = Question("r1", "call_1", question, tuple(choices), free_text)
    index = data.draw(st.integers(0, len(choices) - 1))

    acp = elicitation("s-1", "r1/call_1", asked)
    assert shown(acp["message"], lines=True) == acp["message"]  # nothing left to escape
    options = acp["requestedSchema"]["properties"]["choice"]["oneOf"]
    assert all(shown(o["title"]) == o["title"] for o in options)
    assert [o["const"] for o in options] == [str(n) for n in range(1, len(choices) + 1)]
    picked = {"action": "accept", "content": {"choice": options[index]["const"]}}
    assert elicited(picked, asked) == choices[index]

    sent = ask_params(asked)
    assert shown(sent.question, lines=True) == sent.question
    assert sent.choices is not None and all(shown(c) == c for c in sent.choices)
    assume(len(set(sent.choices)) == len(sent.choices))  # two that look alike are one
    assert asked_answer({"answer": sent.choices[index]}, asked, sent) == choices[index]
