"""The secret scanner against its corpus (tests/security/secrets_corpus/): every true secret is
refused with its class by the store validator, whatever field holds it, split by invisible
characters or spelled in fullwidth forms, and the refusal never echoes it; ordinary text (the
hand-written lines, and real text from this machine: commit messages and package READMEs) is
refused less than 1% of the time."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from meta_memory.errors import WriteRefused
from meta_memory.memory.records import Author, Provenance, VerificationClaim
from meta_memory.memory.secrets import SECRET_CLASSES, scan_secrets
from meta_memory.memory.validator import (
    DESCRIPTION_MAX_BYTES,
    TAG_MAX_BYTES,
    TITLE_MAX_BYTES,
    validate_fields,
    validate_provenance,
)

from .secrets_corpus import echoes, ordinary_machine, ordinary_written, true_secrets

TRUE = true_secrets()
INVISIBLE = ["\u200b", "\u200c", "\u200d", "\u2060", "\ufeff", "\u00ad", "\u180e", "\ufe0f"]


def _refusal(
    title: str = "Note", description: str = "", body: str = "Body.", tags: str | None = None
) -> WriteRefused:
    with pytest.raises(WriteRefused) as refused:
        validate_fields(title, description, body, () if tags is None else (tags,))
    return refused.value


@pytest.mark.parametrize("row", TRUE, ids=lambda row: f"{row['class']}-{row['spelling']}-{row['variant']}")
def test_every_true_secret_is_refused_in_a_body_with_its_class_and_never_echoed(row: dict[str, str]) -> None:
    refused = _refusal(body=row["text"])

    assert refused.rule == "secret-detected" and refused.code == -32602
    assert refused.message == f"body matches secret class '{row['class']}'; secrets are refused, never stored"
    assert not echoes(refused.message, row["secret"], row["class"])


@pytest.mark.parametrize("secret_class", SECRET_CLASSES)
def test_each_field_refuses_a_secret_of_each_class(secret_class: str) -> None:
    rows = [row for row in TRUE if row["class"] == secret_class and row["variant"] == "plain"]
    # The shortest text the class's rule refuses: a token alone, a PEM header line, or an
    # assignment with its name (a value alone is no secret).
    candidates = sorted(
        {t for row in rows for t in (row["secret"], row["secret"].splitlines()[0], row["text"])},
        key=lambda t: len(t.encode()),
    )
    refused_texts = [t for t in candidates if scan_secrets(t) == secret_class]
    for field, limit in (
        ("title", TITLE_MAX_BYTES),
        ("description", DESCRIPTION_MAX_BYTES),
        ("tags", TAG_MAX_BYTES),
    ):
        fitting = [t for t in refused_texts if len(t.encode()) <= limit]
        if fitting:  # a JWT or a PEM block is longer than a tag holds
            assert _refusal(**{field: fitting[0]}).message.startswith(
                f"{field} matches secret class '{secret_class}'"
            )
    assert _refusal(body=refused_texts[0]).message.startswith(f"body matches secret class '{secret_class}'")
    claim = Provenance(
        Author("agent", "alice"), verification=VerificationClaim("agent", ("ran it", refused_texts[0]))
    )
    with pytest.raises(WriteRefused) as refused:
        validate_provenance(claim)
    assert refused.value.message.startswith(f"verification_evidence matches secret class '{secret_class}'")


@settings(max_examples=300)
@given(
    row=st.sampled_from(TRUE),
    inserts=st.lists(st.tuples(st.integers(min_value=0), st.sampled_from(INVISIBLE)), min_size=1, max_size=6),
)
def test_invisible_characters_anywhere_never_hide_a_corpus_secret(
    row: dict[str, str], inserts: list[tuple[int, str]]
) -> None:
    # The oracle is the corpus's label: the class the text was generated to hold.
    text = row["text"]
    for at, char in inserts:
        cut = at % (len(text) + 1)
        text = text[:cut] + char + text[cut:]
    assert scan_secrets(text) == row["class"]


@given(row=st.sampled_from(TRUE))
def test_fullwidth_spelling_of_a_whole_corpus_text_never_hides_its_secret(row: dict[str, str]) -> None:
    wide = "".join(chr(ord(c) + 0xFEE0) if "!" <= c <= "~" else c for c in row["text"])
    assert scan_secrets(wide) == row["class"]


def test_hand_written_ordinary_lines_are_refused_less_than_one_percent_of_the_time() -> None:
    lines = ordinary_written()
    refused = [line for line in lines if scan_secrets(line) is not None]

    assert len(lines) >= 200
    assert len(refused) / len(lines) < 0.01, refused


def test_real_text_from_this_machine_is_refused_less_than_one_percent_of_the_time() -> None:
    paragraphs = ordinary_machine()
    refused = [(p["from"], p["text"][:120]) for p in paragraphs if scan_secrets(p["text"]) is not None]

    assert len(paragraphs) >= 4000
    assert {p["source"] for p in paragraphs} == {"git", "metadata"}
    assert len(refused) / len(paragraphs) < 0.01, refused
