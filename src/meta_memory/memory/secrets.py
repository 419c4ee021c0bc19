"""Secret hygiene for agent-memory writes (REFERENCE 4.5): the four secret classes as compiled patterns,
and the scan the store validator runs over a record's title, description, body and each tag. A match
refuses the write; nothing here redacts. Results name the class and the field only, never the matched
text, so a refusal message can never echo the secret it refused.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from typing import NamedTuple

__all__ = [
    "SECRET_CLASSES",
    "SecretMatch",
    "find_secret_in_fields",
    "scan_secrets",
]

_AWS_ACCESS_KEY_ID = re.compile(r"\b(?:AKIA|ASIA)[A-Z0-9]{16}\b")

# No leading boundary: a token glued to other text is still a token, and refusing too much is the
# safe side of this check.
_GITHUB_TOKEN = re.compile(r"(?:ghp|gho|ghu|ghs|ghr)_[A-Za-z0-9]{36,}|github_pat_[A-Za-z0-9_]{22,}")

_PRIVATE_KEY_BEGIN = "-----BEGIN"
_PRIVATE_KEY_END = "PRIVATE KEY-----"

_CREDENTIAL_KEY_NAMES = (
    "api_key",
    "api-key",
    "apikey",
    "secret_key",
    "secret-key",
    "client_secret",
    "access_token",
    "access-token",
    "auth_token",
    "auth-token",
    "aws_secret_access_key",
    "private_token",
)
_CREDENTIAL_VALUE_CHARS = r"[A-Za-z0-9_\-/+=.]"
# The lookahead asks for an ASCII digit inside the same value run: `[0-9]`, not `\d`, because `\d`
# would accept a non-ASCII digit sitting just past the run. The digit requirement is what keeps
# placeholders such as `api_key = "your-api-key-goes-here"` from being refused.
_CREDENTIAL_ASSIGNMENT = re.compile(
    r"\b(?:"
    + "|".join(re.escape(name) for name in _CREDENTIAL_KEY_NAMES)
    + r")[ \t]*[=:][ \t]*[\"']?"
    + rf"(?={_CREDENTIAL_VALUE_CHARS}*[0-9]){_CREDENTIAL_VALUE_CHARS}{{16,}}",
    re.IGNORECASE,
)

SECRET_CLASSES: tuple[str, ...] = (
    "aws-access-key-id",
    "github-token",
    "private-key",
    "credential-assignment",
)


class SecretMatch(NamedTuple):
    """Which field of a record matched which secret class. Never carries the matched text."""

    field: str
    secret_class: str

    def describe(self) -> str:
        """The validator's refusal wording, e.g. ``body matches secret class 'github-token'``."""
        return f"{self.field} matches secret class '{self.secret_class}'"


def _may_name_a_credential(text: str) -> bool:
    """Whether ``text`` could hold a credential key name: every name contains "key", "secret" or
    "token", and every character the case-insensitive pattern matches for one of their letters
    casefolds to exactly that letter (checked over all of Unicode), so this never says no to a
    text the pattern would match. It is what makes a clean text cheap: the pattern itself costs
    about twenty times as much."""
    folded = text.casefold()
    return "key" in folded or "secret" in folded or "token" in folded


def _secret_class_of(text: str) -> str | None:
    # Each pattern runs only past a substring test it cannot match without (the common case
    # is a clean text, and these tests cost a fraction of the patterns).
    if ("AKIA" in text or "ASIA" in text) and _AWS_ACCESS_KEY_ID.search(text):
        return "aws-access-key-id"
    if "_" in text and _GITHUB_TOKEN.search(text):  # every prefix ends in "_"
        return "github-token"
    if _PRIVATE_KEY_BEGIN in text and _PRIVATE_KEY_END in text:
        return "private-key"
    if _may_name_a_credential(text) and _CREDENTIAL_ASSIGNMENT.search(text):
        return "credential-assignment"
    return None


def scan_secrets(*texts: str) -> str | None:
    """Return the class name of the first secret found in ``texts``, or ``None``.

    Texts are scanned in order and, within a text, classes in :data:`SECRET_CLASSES` order. Each text is
    scanned on its own, so a private-key header in one text and its footer in another do not match.
    """
    for text in texts:
        found = _secret_class_of(text)
        if found is not None:
            return found
    return None


def find_secret_in_fields(title: str, description: str, body: str, tags: Iterable[str]) -> SecretMatch | None:
    """Scan a record's fields in the order title, description, body, tags.

    Returns:
        The first :class:`SecretMatch` (``field`` is ``"title"``, ``"description"``, ``"body"`` or
        ``"tags"``), or ``None`` when the record is clean.
    """
    fields: list[tuple[str, str]] = [("title", title), ("description", description), ("body", body)]
    fields.extend(("tags", tag) for tag in tags)
    for field, text in fields:
        found = _secret_class_of(text)
        if found is not None:
            return SecretMatch(field, found)
    return None
