"""Parameters of the eleven panel methods: the one place their rules and -32602 messages live.

Absent or ``null`` params mean no filters; any other non-object is refused. Unknown keys are
ignored (the ``injections`` method, for one, parses no identity, session or surface filter).
``limit`` is clamped into ``[1, max]`` rather than refused; a non-integer is refused. The cursor
format is agent memory's (memory/params.py), one for every record listing.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from ..errors import InvalidParams
from ..memory.params import format_cursor, parse_cursor, parse_identity, parse_realm
from ..memory.records import ScopeKind, Status
from ..memory.rows import RecordFilter, RecordKey

__all__ = [
    "DREAMS_LIMIT",
    "LISTING_LIMIT",
    "RECORDS_LIMIT",
    "TEXT_MAX_CHARS",
    "Limit",
    "ListingParams",
    "ProposalParams",
    "RecordParams",
    "RecordsParams",
    "format_cursor",
    "parse_cursor",
    "parse_listing_params",
    "parse_proposal_params",
    "parse_record_params",
    "parse_records_params",
]

_SCOPES = tuple(k.value for k in ScopeKind)
_STATUSES = tuple(s.value for s in Status)


@dataclass(frozen=True)
class Limit:
    default: int
    max: int


RECORDS_LIMIT = Limit(50, 200)
DREAMS_LIMIT = Limit(20, 100)
LISTING_LIMIT = Limit(50, 200)
TEXT_MAX_CHARS = 200


@dataclass(frozen=True)
class RecordsParams:
    realm: str | None
    where: RecordFilter
    limit: int
    cursor: RecordKey | None

    @property
    def identity(self) -> str | None:
        """The identity an identity-keyed listing names (``identity``, or identity scope + key)."""
        return self.where.scope_key if self.where.scope_kind == ScopeKind.IDENTITY.value else None


@dataclass(frozen=True)
class RecordParams:
    memory_id: str
    realm: str | None


@dataclass(frozen=True)
class ProposalParams:
    proposal_id: str
    realm: str | None


@dataclass(frozen=True)
class ListingParams:
    realm: str | None
    limit: int


def _obj(params: Any) -> dict[str, Any]:
    if params is None:
        return {}
    if not isinstance(params, dict):
        raise InvalidParams("params must be a JSON object")
    return params


def _limit(p: dict[str, Any], bounds: Limit) -> int:
    value = p.get("limit")
    if value is None:
        return bounds.default
    if isinstance(value, bool) or not isinstance(value, int):
        raise InvalidParams("limit must be an integer when provided")
    return max(1, min(value, bounds.max))


def _choice(p: dict[str, Any], name: str, allowed: tuple[str, ...]) -> str | None:
    value = p.get(name)
    if value is None:
        return None
    if not isinstance(value, str) or value not in allowed:
        shown = ", ".join(allowed)
        raise InvalidParams(f"{name} must be one of {shown} (got {value!r})")
    return value


def _text(p: dict[str, Any]) -> str | None:
    """The records' text filter: trimmed, at most :data:`TEXT_MAX_CHARS`; blank means none."""
    value = p.get("text")
    if value is None:
        return None
    if not isinstance(value, str):
        raise InvalidParams("text must be a string when provided")
    value = value.strip()
    if len(value) > TEXT_MAX_CHARS:
        raise InvalidParams(f"text must be at most {TEXT_MAX_CHARS} characters (got {len(value)})")
    return value or None


def parse_records_params(params: Any) -> RecordsParams:
    """``{realm?, scope?, identity?, scope_key?, status?, text?, limit?, cursor?}``; ``identity``
    implies identity scope keyed by it; ``text`` is a substring of the title or body (rows.py's
    :class:`RecordFilter`)."""
    p = _obj(params)
    realm = parse_realm(p)
    scope = _choice(p, "scope", _SCOPES)
    status = _choice(p, "status", _STATUSES)
    scope_key = p.get("scope_key")
    if scope_key is not None and not isinstance(scope_key, str):
        raise InvalidParams("scope_key must be a string when provided")
    if p.get("identity") is not None:
        identity = parse_identity(p)
        if scope is not None and scope != ScopeKind.IDENTITY.value:
            raise InvalidParams(f"identity implies scope 'identity' (got scope {scope!r})")
        if scope_key is not None and scope_key != identity:
            raise InvalidParams("identity and scope_key name different identities; give one of them")
        scope, scope_key = ScopeKind.IDENTITY.value, identity
    where = RecordFilter(scope, scope_key, status, text=_text(p))
    return RecordsParams(realm, where, _limit(p, RECORDS_LIMIT), parse_cursor(p.get("cursor")))


def parse_record_params(params: Any) -> RecordParams:
    """``{memory_id, realm?}``."""
    if not isinstance(params, dict):
        raise InvalidParams("params must be a JSON object")
    memory_id = params.get("memory_id")
    if not isinstance(memory_id, str) or not memory_id.strip():
        raise InvalidParams("memory_id must be a non-empty string")
    return RecordParams(memory_id.strip(), parse_realm(params))


def parse_proposal_params(params: Any) -> ProposalParams:
    """``{proposal_id, realm?}``."""
    if not isinstance(params, dict):
        raise InvalidParams("params must be a JSON object")
    proposal_id = params.get("proposal_id")
    if not isinstance(proposal_id, str) or not proposal_id.strip():
        raise InvalidParams("proposal_id must be a non-empty string")
    return ProposalParams(proposal_id.strip(), parse_realm(params))


def parse_listing_params(params: Any, bounds: Limit | None) -> ListingParams:
    """``{realm?, limit?}`` (``bounds=None``: the method takes no limit, and ignores one)."""
    p = _obj(params)
    realm = parse_realm(p)
    return ListingParams(realm, _limit(p, bounds) if bounds is not None else 0)
