"""Secret hygiene for agent-memory writes (REFERENCE 4.5, widened): the secret classes, the
normalization every text gets before it is scanned, and the scans the store validator runs over
every free text a record carries (title, description, body, each tag, each piece of verification
evidence, the rest of its provenance) and a write's rationale. A match refuses the write; nothing
here redacts. Results name the class and the field only, never the matched text, so a refusal
message can never echo the secret it refused.

The rules themselves are in :mod:`._secret_rules`; this module owns what is scanned and how a
text is read first: Unicode NFKC (fullwidth letters become ASCII) with every format and
default-ignorable character removed (zero-width spaces and joiners, soft hyphens, word joiners,
variation selectors, ...), so neither can split a secret in two.
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Iterable
from typing import NamedTuple

from ._secret_rules import RULES, first_class, first_tag_class
from .records import Provenance, Record

__all__ = [
    "SECRET_CLASSES",
    "SecretMatch",
    "find_secret",
    "find_secret_in_fields",
    "find_secret_in_provenance",
    "find_secret_in_record",
    "normalize_for_scan",
    "provenance_texts",
    "scan_secrets",
]

SECRET_CLASSES: tuple[str, ...] = tuple(dict.fromkeys(rule.secret_class for rule in RULES))

# Unicode's format characters (category Cf) and default-ignorable code points (DerivedCoreProperties):
# what renders as nothing, or nothing visible, between two characters. A test keeps this set a
# superset of category Cf in the running Python's Unicode database.
_INVISIBLE = re.compile(
    "["
    "\u00ad\u034f\u0600-\u0605\u061c\u06dd\u070f\u0890\u0891\u08e2\u115f\u1160\u17b4\u17b5"
    "\u180b-\u180f\u200b-\u200f\u202a-\u202e\u2060-\u206f\u3164\ufe00-\ufe0f\ufeff\uffa0"
    "\ufff0-\ufffb\U000110bd\U000110cd\U00013430-\U0001343f\U0001bca0-\U0001bca3"
    "\U0001d173-\U0001d17a\U000e0000-\U000e0fff"
    "]"
)


class SecretMatch(NamedTuple):
    """Which field of a record matched which secret class. Never carries the matched text."""

    field: str
    secret_class: str

    def describe(self) -> str:
        """The validator's refusal wording, e.g. ``body matches secret class 'github-token'``."""
        return f"{self.field} matches secret class '{self.secret_class}'"


def normalize_for_scan(text: str) -> str:
    """``text`` as the rules read it: invisible characters removed, then NFKC. ASCII text (the
    common case) is returned as it is, without a copy."""
    if text.isascii():
        return text
    text = _INVISIBLE.sub("", text)
    if not unicodedata.is_normalized("NFKC", text):
        text = unicodedata.normalize("NFKC", text)
        if not text.isascii():
            text = _INVISIBLE.sub("", text)
    return text


def _class_of(text: str, *, tag: bool = False) -> str | None:
    text = normalize_for_scan(text)
    found = first_class(text)
    if found is None and tag:
        # A stored tag is lowercased: the classes whose prefix has capitals, again without case.
        found = first_tag_class(text)
    return found


def scan_secrets(*texts: str) -> str | None:
    """Return the class name of the first secret found in ``texts``, or ``None``.

    Texts are scanned in order and, within a text, classes in :data:`SECRET_CLASSES` order. Each text
    is scanned on its own, so a private-key header in one text and its footer in another do not match.
    """
    for text in texts:
        found = _class_of(text)
        if found is not None:
            return found
    return None


def find_secret(fields: Iterable[tuple[str, str]]) -> SecretMatch | None:
    """The first secret in ``(field, text)`` pairs, scanned in order; a ``"tags"`` text is read as
    a stored (lowercased) tag as well."""
    for field, text in fields:
        found = _class_of(text, tag=field == "tags")
        if found is not None:
            return SecretMatch(field, found)
    return None


def find_secret_in_fields(title: str, description: str, body: str, tags: Iterable[str]) -> SecretMatch | None:
    """Scan a record's fields in the order title, description, body, tags.

    Returns:
        The first :class:`SecretMatch` (``field`` is ``"title"``, ``"description"``, ``"body"`` or
        ``"tags"``), or ``None`` when the record is clean.
    """
    fields: list[tuple[str, str]] = [("title", title), ("description", description), ("body", body)]
    fields.extend(("tags", tag) for tag in tags)
    return find_secret(fields)


def provenance_texts(provenance: Provenance) -> list[tuple[str, str]]:
    """Every free text of ``provenance`` as ``(field, text)``: each piece of verification evidence
    (field ``verification_evidence``), then the verification's ``checked``, the profile, and each
    evidence session id and range (field ``provenance``)."""
    fields: list[tuple[str, str]] = []
    verification = provenance.verification
    if verification is not None:
        fields.extend(("verification_evidence", text) for text in verification.evidence)
        fields.append(("provenance", verification.checked))
    if provenance.profile is not None:
        fields.append(("provenance", provenance.profile))
    for evidence in provenance.evidence:
        fields.append(("provenance", evidence.session_id))
        if evidence.range is not None:
            fields.append(("provenance", evidence.range))
    return fields


def find_secret_in_provenance(provenance: Provenance) -> SecretMatch | None:
    """The first secret in ``provenance``'s free texts (:func:`provenance_texts`), or ``None``."""
    return find_secret(provenance_texts(provenance))


def find_secret_in_record(record: Record) -> SecretMatch | None:
    """The first secret in any free text ``record`` carries: title, description, body, each tag,
    then its provenance (:func:`provenance_texts`)."""
    return find_secret_in_fields(
        record.title, record.description, record.body, record.tags
    ) or find_secret_in_provenance(record.provenance)
