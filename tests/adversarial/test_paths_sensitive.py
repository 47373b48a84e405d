"""Promise: a file that holds secrets or runs code is sensitive under every reading of its
name. NTFS reads ``.git::$INDEX_ALLOCATION`` as ``.git``; Linux reads ``x:.pem`` as a key
file named ``x:.pem``. Taking only the first reading let ``x:.pem`` and ``a:b/.env`` pass as
ordinary files (attached by an @mention, edited unasked under ``autoApprove``).
"""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from tether.workspace.sensitive import reason_for_relative

ENDINGS = [".pem", ".key", ".p12", ".env"]
"""Names sensitive by how they end: any prefix keeps them so (``cert.pem``, ``x.env``)."""
PREFIX = st.text(st.sampled_from("ab.-_ x"), max_size=4)


@given(PREFIX, PREFIX, st.sampled_from(ENDINGS), st.sampled_from(["", "src/", "a:b/"]))
def test_a_name_with_a_colon_before_a_sensitive_ending_stays_sensitive(
    before: str, after: str, ending: str, folder: str
) -> None:
    name = f"{folder}{before}:{after}{ending}"
    assert reason_for_relative(name) is not None, name


@given(st.sampled_from([".git", ".vscode", ".tether"]), st.text("$:ABC_", max_size=12))
def test_an_ntfs_stream_of_a_sensitive_folder_is_that_folder(folder: str, stream: str) -> None:
    assert reason_for_relative(f"{folder}::{stream}/config") is not None


def test_the_names_found_by_hand() -> None:
    assert reason_for_relative("x:.pem") is not None
    assert reason_for_relative("a:b/.env") is not None
    assert reason_for_relative("notes:.txt") is None
