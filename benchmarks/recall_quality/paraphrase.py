"""The paraphrase development set: facts stated one way, questions asked another way.

``paraphrase_scopes(seed, half=...)`` builds one scope per domain (team knowledge, personal assistant,
customer support; see ``paraphrase_facts.py`` for the hand-written families). A scope holds each family's
fact instances (3-4 per family, one for the families about a single policy: 41-49 facts), a distractor for
most facts that shares the question's surface words or entity but not its meaning, and 250-350 draws of the
domain's fillers (most name a person or customer; verbatim repeats dropped), shuffled: 230-320 records.
Every question has the ids of its fact's records as evidence. ``half`` 0 (A) takes the first half of every
phrasing list (records, questions, distractors), 1 (B) the second: choices are made on A, B is held out.
Deterministic for a given seed.
"""

from __future__ import annotations

import random

from devset import Question, Record, Scope
from paraphrase_facts import COMPANIES, DOMAINS, FILLERS, Family, Template

__all__ = ["paraphrase_scopes"]

PEOPLE = [
    "Maria", "Omar", "Priya", "Jonas", "Aiko", "Tomasz", "Fatima", "Diego", "Ingrid", "Kwame", "Lucia", "Ravi",
    "Sasha", "Mei", "Henrik", "Amara", "Pavel", "Noor", "Gabriel", "Yuki", "Elena", "Tobias",
]  # fmt: skip
WEEKDAYS = ["Monday", "Tuesday", "Wednesday", "Thursday", "Friday"]


def paraphrase_scopes(seed: int, *, half: int, fillers: tuple[int, int] = (250, 350)) -> list[Scope]:
    """One scope per domain, using phrasing half ``half`` (0 = A, 1 = B)."""
    return [
        _scope(random.Random(seed * 101 + i), f"para-s{seed}-h{'AB'[half]}-{domain}", families, domain, half, fillers)
        for i, (domain, families) in enumerate(DOMAINS.items())
    ]  # fmt: skip


def _fill(
    template: Template, value: tuple[str, ...], name: str, rng: random.Random
) -> tuple[str, str, tuple[str, ...]]:
    title, body, tags = (
        t.format(*value, n=name, c=rng.choice(COMPANIES), d=rng.choice(WEEKDAYS), k=rng.randint(2, 98)) for t in template
    )  # fmt: skip
    return _cap(title), _cap(body), tuple(tags.split())


def _cap(text: str) -> str:
    return text[:1].upper() + text[1:]


def _scope(
    rng: random.Random,
    name: str,
    families: tuple[Family, ...],
    domain: str,
    half: int,
    fillers: tuple[int, int],
) -> Scope:
    people = rng.sample(PEOPLE, 9)
    pending: list[tuple[tuple[str, str, tuple[str, ...]], int | None]] = []  # (record, fact number)
    seen: set[tuple[str, str]] = set()
    facts: list[tuple[Family, tuple[str, ...], str]] = []

    def add(record: tuple[str, str, tuple[str, ...]], fact: int | None) -> None:
        if (record[0], record[1]) not in seen:  # a verbatim repeat would crowd every top-k list
            seen.add((record[0], record[1]))
            pending.append((record, fact))

    for family in families:
        count = min(rng.randint(*family.count), len(family.values))
        for value, person in zip(rng.sample(family.values, count), rng.sample(people, count), strict=True):
            fact = len(facts)
            facts.append((family, value, person))
            for part in family.parts:
                add(_fill(rng.choice(part[half]), value, person, rng), fact)
            if family.distractors[half] and rng.random() < 0.8:
                who = person if rng.random() < 0.5 else rng.choice(people)
                add(_fill(rng.choice(family.distractors[half]), value, who, rng), None)
    for _ in range(rng.randint(*fillers)):
        add(_fill(rng.choice(FILLERS[domain]), ("",), rng.choice(people), rng), None)
    rng.shuffle(pending)

    scope = Scope(name)
    evidence: dict[int, list[int]] = {}
    for doc, ((title, body, tags), of_fact) in enumerate(pending, start=1):
        scope.records.append(Record(doc, title, body, tags))
        if of_fact is not None:
            evidence.setdefault(of_fact, []).append(doc)
    for number, (family, value, person) in enumerate(facts):
        text = rng.choice(family.questions[half]).format(*value, n=person)
        scope.questions.append(Question(_cap(text), tuple(evidence[number]), family.kind))
    return scope
