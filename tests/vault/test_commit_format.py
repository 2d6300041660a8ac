"""One commit format (vault/commits.py): the server's trailers are a closed set, built and read back in one
place, and a workstation's commits (``notegate sync``) are spelled there too, in their own voice."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from notegate.policy import decide_commit_provenance
from notegate.vault.commits import (
    TRAILERS,
    commit_message,
    contract_trailers,
    parse_trailers,
    sync_author_email,
    sync_message,
)
from support.callers import make_caller


def test_a_trailer_outside_the_closed_set_is_a_bug() -> None:
    with pytest.raises(ValueError, match="Notegate-Made-Up"):
        commit_message(make_caller(), "x", {"Notegate-Made-Up": "1"})


@given(st.dictionaries(st.sampled_from(sorted(TRAILERS)), st.text(max_size=30), max_size=4), st.text(max_size=40))
def test_what_is_built_is_read_back_and_nothing_else(extra: dict[str, str], summary: str) -> None:
    read = parse_trailers(commit_message(make_caller(), summary, extra))
    assert set(read) <= TRAILERS
    assert {*extra, "Notegate-Client", "Notegate-Connector", "Notegate-Session", "Notegate-Tier"} <= set(read)


def test_contract_trailers_are_in_the_set() -> None:
    assert set(contract_trailers("capture", "k")) <= TRAILERS


def test_a_workstation_commit_speaks_in_its_own_voice() -> None:
    """What sync writes passes the git door's provenance rule unrecorded: no Notegate-* trailer, no server e-mail."""
    message = sync_message("sync: 2 notes", "sync:laptop")
    decision = decide_commit_provenance(message, [sync_author_email("owner", "laptop")], recorded=False)
    assert decision.allowed and decision.rule == "provenance-pushed"
