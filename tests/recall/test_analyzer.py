"""Analyzer rules: tokenizer, stopwords, stemming, concepts, cues and query-term union."""

from __future__ import annotations

import re

from hypothesis import given, settings
from hypothesis import strategies as st

from meta_memory.memory.recall import analyze_record, index_terms, query_terms
from meta_memory.memory.recall.analyzer import WHEN_CUE
from meta_memory.memory.recall.lexicon import UPSTREAM_STOPWORDS


def words_only(terms: list[str]) -> list[str]:
    return [t for t in terms if not t.startswith(("~", "#"))]


def test_tokenizer_splits_on_punctuation_and_lowercases() -> None:
    assert words_only(index_terms("Kubernetes/ROLLOUT:status!")) == ["kubernet", "rollout", "statu"]


def test_hyphenated_compound_indexes_joined_word_and_parts() -> None:
    assert words_only(index_terms("self-care")) == ["selfcar", "self", "care"]


def test_contractions_and_possessives_do_not_leave_fragments() -> None:
    assert words_only(index_terms("Melanie's dog didn't bark, we'll see")) == ["melani", "dog", "bark", "see"]


def test_accented_letters_fold_to_ascii() -> None:
    assert words_only(index_terms("Café crème")) == ["cafe", "creme"]


def test_every_upstream_stopword_is_dropped_in_any_case() -> None:
    text = " ".join(sorted(UPSTREAM_STOPWORDS)) + " " + " ".join(w.upper() for w in UPSTREAM_STOPWORDS)
    assert index_terms(text) == []
    assert query_terms(text, sorted(UPSTREAM_STOPWORDS)) == []


def test_one_character_tokens_are_dropped() -> None:
    assert index_terms("a b c 7 x") == []


def test_inflections_and_irregular_forms_share_one_term() -> None:
    forms = ["run", "runs", "running", "ran"]
    assert {words_only(index_terms(f))[0] for f in forms} == {"run"}
    assert words_only(index_terms("went")) == words_only(index_terms("goes")) == ["go"]


def test_term_frequency_is_kept_as_repetition() -> None:
    assert words_only(index_terms("pottery pottery class")).count("potteri") == 2


def test_paraphrases_share_a_concept_term() -> None:
    assert "~relax" in index_terms("Nothing helps me unwind like a long walk")
    assert "~relax" in query_terms("What does Melanie do to destress?", None)


def test_when_question_adds_time_cue_and_dated_text_carries_it() -> None:
    assert WHEN_CUE in query_terms("When did Caroline go to the support group?", None)
    assert WHEN_CUE not in query_terms("Where did Caroline go?", None)
    assert WHEN_CUE in index_terms("I went there yesterday")
    assert WHEN_CUE in index_terms("back in 2019")


def test_query_terms_are_the_union_of_explicit_terms_and_text_without_duplicates() -> None:
    terms = query_terms("Deploying the canary", ["Canary", "rollback"])
    assert terms[:2] == ["canari", "rollback"]
    assert "deploi" in terms
    assert len(terms) == len(set(terms))


def test_question_form_words_are_dropped_from_queries_only() -> None:
    assert "kind" in index_terms("She is kind")
    assert "kind" not in query_terms("What kind of music does Jon like?", None)


def test_analyze_record_counts_terms_per_field() -> None:
    analyzed = analyze_record("Caroline", "Caroline painted, painting again", ["Art"])
    assert analyzed.fields["carolin"] == (1, 1, 0)
    assert analyzed.fields["paint"] == (0, 2, 0)
    assert analyzed.fields["~art"] == (0, 2, 1)
    assert analyzed.length == sum(sum(tfs) for tfs in analyzed.fields.values())


_TERM = re.compile(r"[~#]?[a-z0-9]+")
_WORDY = st.text(
    alphabet=st.sampled_from(list("abcXYZ019 -_'’.:é\u00df\u0130\u212a\u2019\n")) | st.characters(),
    max_size=80,
)


@settings(max_examples=400, deadline=None)
@given(title=_WORDY, body=_WORDY, tags=st.lists(_WORDY, max_size=3))
def test_index_terms_are_ascii_words_so_the_fresh_tier_can_find_them_with_instr(
    title: str, body: str, tags: list[str]
) -> None:
    """The recall index's fresh tier stores a record's terms as ' term:tf:tf:tf ...' and finds a
    term with ``instr(terms, ' term:')`` (recall_index.py): that is exact only while no term holds
    a space or a colon. Every term is a run of [a-z0-9], optionally after '~' or '#'."""
    assert all(_TERM.fullmatch(term) for term in analyze_record(title, body, tags).fields)
    assert all(_TERM.fullmatch(term) for term in query_terms(body, [title, *tags]))
