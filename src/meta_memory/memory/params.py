"""Parameter parsing for the agent-memory API: the one place its input rules live.

The JSON-RPC methods and the in-process Python handle both call these parsers, so a bad
``title`` gets the same -32602 message on every surface. Messages follow REFERENCE 1.3.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any

from ..errors import InvalidParams, WriteRefused
from ..names import realm_problem
from .secrets import scan_secrets
from .validator import BODY_MAX_BYTES, TAG_MAX_BYTES, TAGS_MAX, TITLE_MAX_BYTES

__all__ = [
    "IDENTITY_MAX_BYTES",
    "MAX_ENTRIES_LIMIT",
    "QUERY_TEXT_MAX_BYTES",
    "ForgetParams",
    "RecallParams",
    "RememberParams",
    "UpdateParams",
    "normalize_tags",
    "parse_forget",
    "parse_identity",
    "parse_optional_name",
    "parse_realm",
    "parse_recall",
    "parse_remember",
    "parse_update",
]

IDENTITY_MAX_BYTES = 512
QUERY_TEXT_MAX_BYTES = 16_384
MAX_ENTRIES_LIMIT = 64
_WS = re.compile(r"\s+")
_CONTROL = re.compile(r"[\x00-\x1f\x7f]")


@dataclass(frozen=True)
class RememberParams:
    identity: str
    realm: str
    title: str
    body: str
    tags: tuple[str, ...]


@dataclass(frozen=True)
class UpdateParams:
    identity: str
    realm: str
    memory_id: str
    title: str
    body: str
    tags: tuple[str, ...] | None


@dataclass(frozen=True)
class RecallParams:
    identity: str
    realm: str
    selection: str
    query_text: str | None
    query_terms: tuple[str, ...]
    max_entries: int


@dataclass(frozen=True)
class ForgetParams:
    identity: str
    realm: str
    memory_id: str


def _obj(params: Any) -> dict[str, Any]:
    if not isinstance(params, dict):
        raise InvalidParams("params must be a JSON object")
    return params


def _nbytes(text: str) -> int:
    return len(text.encode("utf-8"))


def _identity(p: dict[str, Any]) -> str:
    value = p.get("identity")
    if (
        not isinstance(value, str)
        or not value.strip()
        or value != value.strip()
        or _CONTROL.search(value)
        or _nbytes(value) > IDENTITY_MAX_BYTES
    ):
        raise InvalidParams("identity must be a valid non-empty string")
    return value


def parse_identity(p: dict[str, Any]) -> str:
    """The ``identity`` param, by the one rule every surface shares."""
    return _identity(p)


def parse_optional_name(p: dict[str, Any], name: str) -> str | None:
    """An optional non-empty name param (``realm``, ``mob``); ``None`` when absent."""
    value = p.get(name)
    if value is None:
        return None
    if not isinstance(value, str) or not value.strip():
        raise InvalidParams(f"{name} must be a non-empty string when provided")
    return value.strip()


def parse_realm(p: dict[str, Any]) -> str | None:
    """The optional ``realm`` param (trimmed), by the one realm rule (names.py); ``None`` when absent."""
    value = p.get("realm")
    if value is None:
        return None
    problem = realm_problem(value)
    if problem is not None:
        # The non-empty rule keeps the wording of the other optional params.
        raise InvalidParams(f"realm {problem}" + (" when provided" if "non-empty" in problem else ""))
    assert isinstance(value, str)
    return value.strip()


def _realm(p: dict[str, Any], default: str) -> str:
    return parse_realm(p) or default


def _memory_id(p: dict[str, Any]) -> str:
    value = p.get("memory_id")
    if not isinstance(value, str) or not value.strip():
        raise InvalidParams("memory_id must be a non-empty string")
    return value.strip()


def _title(p: dict[str, Any]) -> str:
    value = p.get("title")
    if not isinstance(value, str) or not value.strip():
        raise InvalidParams("title must be a non-empty string")
    title = _WS.sub(" ", value).strip()
    if _nbytes(title) > TITLE_MAX_BYTES:
        raise InvalidParams(f"title must be at most {TITLE_MAX_BYTES} bytes")
    return title


def _body(p: dict[str, Any]) -> str:
    value = p.get("body")
    if not isinstance(value, str) or not value.strip():
        raise InvalidParams("body must be a non-empty string")
    body = value.strip()
    if _nbytes(body) > BODY_MAX_BYTES:
        raise InvalidParams(f"body must be at most {BODY_MAX_BYTES} bytes")
    return body


def normalize_tags(value: Any) -> tuple[str, ...]:
    """Trim, lowercase, drop duplicates, sort. Blank entries are an error, not dropped."""
    if not isinstance(value, list):
        raise InvalidParams("tags must be an array when provided")
    if not all(isinstance(t, str) and t.strip() for t in value):
        raise InvalidParams("tags must contain only non-empty strings")
    if len(value) > TAGS_MAX:
        raise InvalidParams(f"tags must contain at most {TAGS_MAX} entries")
    # Scan the tags as sent: lowercasing first would hide case-sensitive classes (AWS key ids).
    secret = scan_secrets(*value)
    if secret is not None:
        raise WriteRefused(
            "secret-detected", f"tags matches secret class '{secret}'; secrets are refused, never stored"
        )
    tags = sorted({t.strip().lower() for t in value})
    if any(_nbytes(t) > TAG_MAX_BYTES for t in tags):
        raise InvalidParams(f"tags must be at most {TAG_MAX_BYTES} bytes")
    return tuple(tags)


def _tags(p: dict[str, Any]) -> tuple[str, ...] | None:
    value = p.get("tags")
    return None if value is None else normalize_tags(value)


def parse_remember(params: Any, *, default_realm: str) -> RememberParams:
    p = _obj(params)
    return RememberParams(_identity(p), _realm(p, default_realm), _title(p), _body(p), _tags(p) or ())


def parse_update(params: Any, *, default_realm: str) -> UpdateParams:
    p = _obj(params)
    identity, realm, memory_id = _identity(p), _realm(p, default_realm), _memory_id(p)
    return UpdateParams(identity, realm, memory_id, _title(p), _body(p), _tags(p))


def parse_forget(params: Any, *, default_realm: str) -> ForgetParams:
    p = _obj(params)
    return ForgetParams(_identity(p), _realm(p, default_realm), _memory_id(p))


def parse_recall(
    params: Any, *, default_realm: str, default_selection: str, default_max: int
) -> RecallParams:
    p = _obj(params)
    identity, realm = _identity(p), _realm(p, default_realm)
    selection = p.get("selection", default_selection)
    if selection is None:
        selection = default_selection
    if not isinstance(selection, str) or selection.strip().lower() not in ("always", "contextual"):
        raise InvalidParams(f"selection must be 'always' or 'contextual' (got '{selection}')")
    query_text = p.get("query_text")
    if query_text is not None:
        if not isinstance(query_text, str) or not query_text.strip():
            raise InvalidParams("query_text must be a non-empty string when provided")
        if _nbytes(query_text) > QUERY_TEXT_MAX_BYTES:
            raise InvalidParams(f"query_text must be at most {QUERY_TEXT_MAX_BYTES} bytes")
    terms = p.get("query_terms")
    if terms is not None:
        if not isinstance(terms, list):
            raise InvalidParams("query_terms must be an array when provided")
        if not all(isinstance(t, str) and t.strip() for t in terms):
            raise InvalidParams("query_terms must contain only non-empty strings")
    max_entries = p.get("max_entries", default_max)
    if max_entries is None:
        max_entries = default_max
    if isinstance(max_entries, bool) or not isinstance(max_entries, int) or max_entries < 1:
        raise InvalidParams("max_entries must be a positive integer when provided")
    if max_entries > MAX_ENTRIES_LIMIT:
        raise InvalidParams(f"max_entries must be between 1 and {MAX_ENTRIES_LIMIT}")
    return RecallParams(
        identity,
        realm,
        selection.strip().lower(),
        query_text,
        tuple(t.strip() for t in terms or ()),
        max_entries,
    )
