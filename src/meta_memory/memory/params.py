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
from .records import RecordKind, Scope, ScopeKind, Status
from .rows import RecordFilter, RecordKey
from .scopes import SCOPE_KINDS
from .secrets import scan_secrets
from .validator import BODY_MAX_BYTES, TAG_MAX_BYTES, TAGS_MAX, TITLE_MAX_BYTES

__all__ = [
    "ANY_STATUS",
    "EXPIRED_STATUS",
    "EXPIRES_AT_MS_MAX",
    "IDENTITY_MAX_BYTES",
    "LIST_LIMIT_DEFAULT",
    "LIST_LIMIT_MAX",
    "MAX_ENTRIES_LIMIT",
    "PURGE_IDS_MAX",
    "QUERY_TEXT_MAX_BYTES",
    "TTL_MS_MAX",
    "Expiry",
    "ForgetParams",
    "GetParams",
    "ListParams",
    "PurgeParams",
    "RecallParams",
    "RememberParams",
    "UpdateParams",
    "format_cursor",
    "normalize_tags",
    "parse_cursor",
    "parse_forget",
    "parse_get",
    "parse_identity",
    "parse_list",
    "parse_optional_name",
    "parse_purge",
    "parse_realm",
    "parse_recall",
    "parse_remember",
    "parse_update",
    "require_identity",
]

IDENTITY_MAX_BYTES = 512
QUERY_TEXT_MAX_BYTES = 16_384
MAX_ENTRIES_LIMIT = 64
PURGE_IDS_MAX = 1000
EXPIRED_STATUS = "expired"  # a listing's status: active records whose expiry has come
TTL_MS_MAX = 100 * 365 * 24 * 3600 * 1000  # a century
EXPIRES_AT_MS_MAX = 2**53 - 1  # exact in every JSON number
LIST_LIMIT_DEFAULT = 50
LIST_LIMIT_MAX = 200
ANY_STATUS = "any"
_INT64_MAX = 2**63 - 1
_WS = re.compile(r"\s+")
_CONTROL = re.compile(r"[\x00-\x1f\x7f]")
_CURSOR = re.compile(r"(0|[1-9][0-9]{0,18}):(.+)", re.DOTALL)
_CURSOR_SHAPE = "cursor must be '<updated_at_ms>:<memory_id>' as returned in next_cursor"
_STATUSES = (*(s.value for s in Status), EXPIRED_STATUS, ANY_STATUS)
_KINDS = tuple(k.value for k in RecordKind)


@dataclass(frozen=True)
class RememberParams:
    """``identity`` is ``None`` when ``scope`` names a shared scope (mob, operator, realm)."""

    identity: str | None
    realm: str
    title: str
    body: str
    tags: tuple[str, ...]
    scope: Scope
    expiry: Expiry | None = None


@dataclass(frozen=True)
class Expiry:
    """When a written record expires: at ``at_ms`` (Unix ms), or ``ttl_ms`` after the write;
    neither: it never expires (an ``update`` that says ``expires_at_ms: null``)."""

    at_ms: int | None = None
    ttl_ms: int | None = None

    def resolve(self, now_ms: int) -> int | None:
        """The Unix ms it expires at, for a write at ``now_ms``.

        Raises:
            InvalidParams: ``expires_at_ms`` is not after ``now_ms``.
        """
        if self.ttl_ms is not None:
            return now_ms + self.ttl_ms
        if self.at_ms is not None and self.at_ms <= now_ms:
            raise InvalidParams(f"expires_at_ms must be in the future (it is {self.at_ms}, now is {now_ms})")
        return self.at_ms


@dataclass(frozen=True)
class UpdateParams:
    identity: str | None
    realm: str
    memory_id: str
    title: str
    body: str
    tags: tuple[str, ...] | None
    scope: Scope
    expiry: Expiry | None = None  # None: the new version keeps the prior one's expiry


@dataclass(frozen=True)
class RecallParams:
    identity: str
    realm: str
    selection: str
    query_text: str | None
    query_terms: tuple[str, ...]
    max_entries: int
    tags: tuple[str, ...] = ()  # only records carrying every one of them
    scope_kinds: frozenset[str] | None = None  # only the identity's scopes of these kinds
    wait_for_vectors: bool = False  # hybrid: wait (up to recall_timeout_ms) for the vectors first
    min_score: float | None = None  # contextual: only records scoring at least this (0..1)


@dataclass(frozen=True)
class ForgetParams:
    identity: str | None
    realm: str
    memory_id: str
    scope: Scope


@dataclass(frozen=True)
class PurgeParams:
    """``meta/agent_memory/purge``: ``memory_ids`` set, those records' lineages; ``None`` (the
    params say ``all: true``), everything of ``identity`` in the realm."""

    identity: str
    realm: str
    memory_ids: tuple[str, ...] | None


@dataclass(frozen=True)
class ListParams:
    """``meta/agent_memory/list``. ``identity`` is ``None`` only on the console surface (a realm's
    records, as far as the caller may read them); ``where`` carries every filter, the identity's
    scope included."""

    identity: str | None
    realm: str
    where: RecordFilter
    limit: int
    cursor: RecordKey | None


@dataclass(frozen=True)
class GetParams:
    """``meta/agent_memory/get``. ``identity`` is ``None`` only on the console surface."""

    identity: str | None
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


def _tag_list(value: Any, name: str) -> list[str]:
    if not isinstance(value, list):
        raise InvalidParams(f"{name} must be an array when provided")
    if not all(isinstance(t, str) and t.strip() for t in value):
        raise InvalidParams(f"{name} must contain only non-empty strings")
    if len(value) > TAGS_MAX:
        raise InvalidParams(f"{name} must contain at most {TAGS_MAX} entries")
    return value


def _normalized(value: list[str], name: str) -> tuple[str, ...]:
    tags = sorted({t.strip().lower() for t in value})
    if any(_nbytes(t) > TAG_MAX_BYTES for t in tags):
        raise InvalidParams(f"{name} must be at most {TAG_MAX_BYTES} bytes")
    return tuple(tags)


def normalize_tags(value: Any) -> tuple[str, ...]:
    """Trim, lowercase, drop duplicates, sort. Blank entries are an error, not dropped."""
    tags = _tag_list(value, "tags")
    # Scan the tags as sent: lowercasing first would hide case-sensitive classes (AWS key ids).
    secret = scan_secrets(*tags)
    if secret is not None:
        raise WriteRefused(
            "secret-detected", f"tags matches secret class '{secret}'; secrets are refused, never stored"
        )
    return _normalized(tags, "tags")


def _tag_filter(p: dict[str, Any], name: str) -> tuple[str, ...]:
    """A tag filter (``tags_any``, ``tags_all``, recall's ``tags``): the write rules for tags,
    normalized the same way, and at least one tag. No secret scan: a filter stores nothing, and
    no stored tag can hold a secret."""
    value = p.get(name)
    if value is None:
        return ()
    tags = _normalized(_tag_list(value, name), name)
    if not tags:
        raise InvalidParams(f"{name} must contain at least one tag when provided")
    return tags


def _tags(p: dict[str, Any]) -> tuple[str, ...] | None:
    value = p.get("tags")
    return None if value is None else normalize_tags(value)


def _write_scope(p: dict[str, Any], realm: str) -> tuple[str | None, Scope]:
    """Where an application write goes: ``identity``'s own scope (the default), or the shared
    scope ``scope`` names (``{"kind": "mob" | "operator" | "realm", "key": ...}``)."""
    value = p.get("scope")
    if value is None:
        identity = _identity(p)
        return identity, Scope.identity(realm, identity)
    if not isinstance(value, dict):
        raise InvalidParams('scope must be an object {"kind", "key"} when provided')
    unknown = sorted(set(value) - {"kind", "key"})
    if unknown:
        raise InvalidParams(f"unsupported scope fields: {', '.join(unknown)}")
    kind = value.get("kind")
    if kind not in SCOPE_KINDS:
        raise InvalidParams(f"scope.kind must be one of {', '.join(SCOPE_KINDS)}")
    key = value.get("key")
    if kind == ScopeKind.IDENTITY.value:
        identity = _identity({"identity": key if key is not None else p.get("identity")})
        if "identity" in p and p["identity"] != identity:
            raise InvalidParams("scope.key and identity name two identities; give one")
        return identity, Scope.identity(realm, identity)
    if "identity" in p:
        raise InvalidParams(f"identity names an identity scope; a write to a {kind} scope gives only scope")
    if kind == ScopeKind.REALM.value:
        if key not in (None, ""):
            raise InvalidParams("scope.key must be absent for the realm scope")
        return None, Scope(ScopeKind.REALM, realm)
    if not isinstance(key, str) or not key.strip() or key != key.strip() or _CONTROL.search(key):
        raise InvalidParams(f"scope.key must name the {kind} (a non-empty string without control characters)")
    if _nbytes(key) > IDENTITY_MAX_BYTES:
        raise InvalidParams(f"scope.key must be at most {IDENTITY_MAX_BYTES} bytes")
    return None, Scope(ScopeKind(kind), realm, key)


def parse_remember(params: Any, *, default_realm: str) -> RememberParams:
    p = _obj(params)
    realm = _realm(p, default_realm)
    identity, scope = _write_scope(p, realm)
    return RememberParams(identity, realm, _title(p), _body(p), _tags(p) or (), scope, _expiry(p))


def parse_update(params: Any, *, default_realm: str) -> UpdateParams:
    p = _obj(params)
    realm = _realm(p, default_realm)
    identity, scope = _write_scope(p, realm)
    return UpdateParams(identity, realm, _memory_id(p), _title(p), _body(p), _tags(p), scope, _expiry(p))


def _expiry(p: dict[str, Any]) -> Expiry | None:
    """``expires_at_ms`` (Unix ms) or ``ttl_ms`` (from the write), exclusive; ``expires_at_ms:
    null`` given explicitly: no expiry; neither given: ``None`` (an update keeps the prior's)."""
    at, ttl = p.get("expires_at_ms"), p.get("ttl_ms")
    if at is not None and ttl is not None:
        raise InvalidParams("expires_at_ms and ttl_ms are exclusive: give one")
    if ttl is not None:
        if isinstance(ttl, bool) or not isinstance(ttl, int) or not 1 <= ttl <= TTL_MS_MAX:
            raise InvalidParams(f"ttl_ms must be an integer between 1 and {TTL_MS_MAX} (milliseconds)")
        return Expiry(ttl_ms=ttl)
    if at is not None:
        if isinstance(at, bool) or not isinstance(at, int) or not 0 < at <= EXPIRES_AT_MS_MAX:
            raise InvalidParams(
                f"expires_at_ms must be a positive integer (Unix ms) at most {EXPIRES_AT_MS_MAX}"
            )
        return Expiry(at_ms=at)
    return Expiry() if "expires_at_ms" in p else None


def parse_forget(params: Any, *, default_realm: str) -> ForgetParams:
    p = _obj(params)
    realm = _realm(p, default_realm)
    identity, scope = _write_scope(p, realm)
    return ForgetParams(identity, realm, _memory_id(p), scope)


def parse_purge(params: Any, *, default_realm: str) -> PurgeParams:
    """``{identity, realm?}`` with exactly one of ``memory_id``, ``memory_ids`` (at most
    :data:`PURGE_IDS_MAX`) and ``all: true``: a purge of a whole identity is asked for by name,
    never by leaving the ids out."""
    p = _obj(params)
    identity, realm = _identity(p), _realm(p, default_realm)
    everything = p.get("all", False)
    if not isinstance(everything, bool):
        raise InvalidParams("all must be a boolean when provided")
    given = [name for name in ("memory_id", "memory_ids") if p.get(name) is not None]
    if everything:
        given.append("all")
    if len(given) != 1:
        raise InvalidParams(
            "memory_id, memory_ids and all are exclusive, and one is required: name records, or all: true "
            f"for everything of the identity (got {', '.join(given) or 'none'})"
        )
    if everything:
        return PurgeParams(identity, realm, None)
    if "memory_id" in given:
        return PurgeParams(identity, realm, (_memory_id(p),))
    ids = p["memory_ids"]
    if not isinstance(ids, list) or not 1 <= len(ids) <= PURGE_IDS_MAX:
        raise InvalidParams(f"memory_ids must be an array of 1 to {PURGE_IDS_MAX} record ids")
    if not all(isinstance(i, str) and i.strip() for i in ids):
        raise InvalidParams("memory_ids must contain only non-empty strings")
    return PurgeParams(identity, realm, tuple(dict.fromkeys(i.strip() for i in ids)))


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
        _tag_filter(p, "tags"),
        _scope_kinds(p),
        _flag(p, "wait_for_vectors"),
        _min_score(p, selection.strip().lower()),
    )


def _min_score(p: dict[str, Any], selection: str) -> float | None:
    value = p.get("min_score")
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, int | float) or not 0.0 <= value <= 1.0:
        raise InvalidParams(f"min_score must be a number from 0 to 1 (got {value!r})")
    if selection != "contextual":
        raise InvalidParams(
            "min_score needs selection 'contextual': 'always' recall ranks by recency, not score"
        )
    return float(value)


def _flag(p: dict[str, Any], name: str) -> bool:
    value = p.get(name, False)
    if value is None:
        return False
    if not isinstance(value, bool):
        raise InvalidParams(f"{name} must be a boolean when provided")
    return value


def _scope_kinds(p: dict[str, Any]) -> frozenset[str] | None:
    """The optional ``scopes`` filter of a recall: scope kinds (``identity``, ``mob``,
    ``operator``, ``realm``)."""
    value = p.get("scopes")
    if value is None:
        return None
    kinds = ", ".join(SCOPE_KINDS)
    if not isinstance(value, list) or not value:
        raise InvalidParams(f"scopes must be a non-empty array of scope kinds ({kinds}) when provided")
    if not all(isinstance(kind, str) and kind in SCOPE_KINDS for kind in value):
        raise InvalidParams(f"scopes must contain only scope kinds ({kinds})")
    return frozenset(value)


# -- management reads: list and get ----------------------------------------------------------------


def format_cursor(key: RecordKey) -> str:
    """A listing position on the wire: ``"<updated_at_ms>:<memory_id>"``."""
    return f"{key[0]}:{key[1]}"


def parse_cursor(value: Any) -> RecordKey | None:
    """``"<updated_at_ms>:<memory_id>"`` → ``(updated_at_ms, memory_id)``; ``None`` when absent."""
    if value is None:
        return None
    match = _CURSOR.fullmatch(value) if isinstance(value, str) else None
    if match is None:
        raise InvalidParams(_CURSOR_SHAPE)
    updated = int(match.group(1))
    if updated > _INT64_MAX:
        raise InvalidParams(_CURSOR_SHAPE)
    return (updated, match.group(2))


def require_identity(identity: str | None) -> str:
    """The application surface always names the identity (the console may leave it out).

    Raises:
        InvalidParams: ``identity`` is missing, with the identity rule's own message.
    """
    if identity is None:
        raise InvalidParams("identity must be a valid non-empty string")
    return identity


def _optional_identity(p: dict[str, Any]) -> str | None:
    return None if p.get("identity") is None else _identity(p)


def _choice(p: dict[str, Any], name: str, allowed: tuple[str, ...], default: str | None) -> str | None:
    value = p.get(name)
    if value is None:
        return default
    if not isinstance(value, str) or value not in allowed:
        shown = value if isinstance(value, str | int | float) else type(value).__name__
        raise InvalidParams(f"{name} must be one of {', '.join(allowed)} (got {shown!r})")
    return value


def _timestamp(p: dict[str, Any], name: str) -> int | None:
    value = p.get(name)
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, int) or not 0 <= value <= _INT64_MAX:
        raise InvalidParams(f"{name} must be an integer between 0 and 2^63-1 when provided")
    return value


def _window(p: dict[str, Any], field: str) -> tuple[int | None, int | None]:
    after, before = _timestamp(p, f"{field}_after_ms"), _timestamp(p, f"{field}_before_ms")
    if after is not None and before is not None and after >= before:
        raise InvalidParams(
            f"{field}_after_ms must be less than {field}_before_ms (the window is [after, before))"
        )
    return after, before


def parse_list(params: Any, *, default_realm: str) -> ListParams:
    """``{identity?, realm?, status?, kind?, tags_any?, tags_all?, created_after_ms?,
    created_before_ms?, updated_after_ms?, updated_before_ms?, limit?, cursor?}``.

    ``status`` defaults to ``active``; ``any`` lists every status. Time windows are half-open
    (``*_after_ms`` inclusive, ``*_before_ms`` exclusive). ``limit`` (default 50) outside 1..200 is
    refused, as ``max_entries`` is. Tag filters need at least one tag.
    """
    p = _obj(params)
    identity, realm = _optional_identity(p), _realm(p, default_realm)
    status = _choice(p, "status", _STATUSES, Status.ACTIVE.value)
    kind = _choice(p, "kind", _KINDS, None)
    tags_any, tags_all = _tag_filter(p, "tags_any"), _tag_filter(p, "tags_all")
    created_after, created_before = _window(p, "created")
    updated_after, updated_before = _window(p, "updated")
    limit = p.get("limit")
    if limit is None:
        limit = LIST_LIMIT_DEFAULT
    if isinstance(limit, bool) or not isinstance(limit, int) or not 1 <= limit <= LIST_LIMIT_MAX:
        raise InvalidParams(f"limit must be an integer between 1 and {LIST_LIMIT_MAX} when provided")
    where = RecordFilter(
        scope_kind=ScopeKind.IDENTITY.value if identity is not None else None,
        scope_key=identity,
        status=None if status == ANY_STATUS else status,
        kind=kind,
        tags_any=tags_any,
        tags_all=tags_all,
        created_after_ms=created_after,
        created_before_ms=created_before,
        updated_after_ms=updated_after,
        updated_before_ms=updated_before,
    )
    return ListParams(identity, realm, where, limit, parse_cursor(p.get("cursor")))


def parse_get(params: Any, *, default_realm: str) -> GetParams:
    """``{identity?, memory_id, realm?}`` (``identity`` is required on the application surface)."""
    p = _obj(params)
    identity, realm = _optional_identity(p), _realm(p, default_realm)
    return GetParams(identity, realm, _memory_id(p))
