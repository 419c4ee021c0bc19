"""A mem0 export (``Memory.get_all()`` as JSON) read as application records.

mem0 returns ``{"results": [...]}`` (a bare list before its v1.1 output); each item has ``id``,
``memory`` (the text), ``user_id``, ``hash``, ``metadata`` and ISO-8601 ``created_at`` /
``updated_at``, and may have ``agent_id``, ``run_id``, ``actor_id``, ``role`` and (mem0's
platform) ``categories`` and ``app_id``. Each becomes one record of the identity scope its
``user_id`` names (or its ``agent_id`` when it has no user, or the identity the operator gives),
authored by the application at ``agent_observed`` (mem0's memories are what an LLM extracted from
a conversation), with:

- id ``mem0-<id>``, so importing the same export again finds every record present;
- the text as the body, and a title made from its first line (at most 80 characters, cut at a
  word and marked ``…``);
- the timestamps kept (a zone-less time is UTC; no ``updated_at``: the creation time);
- the categories that are valid tags as tags (the others named in the report);
- the ids and metadata mem0 kept beside the text as the description (``mem0 {json}``), when they
  fit its 400 bytes (else the ids alone, and the report says so).

mem0's ``hash`` (an MD5 of the text) is not kept: the record has its own content hash.
"""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from typing import Any

from ...errors import InvalidParams
from ..params import parse_identity
from ..records import APPLICATION, Provenance, Record, RecordKind, Scope, Status, Trust, content_hash
from ..validator import DESCRIPTION_MAX_BYTES, TAG_MAX_BYTES, TAGS_MAX, TITLE_MAX_BYTES
from .lines import MEMORY_ID_MAX_BYTES, Entry, LineProblem, check_texts, encode_line

__all__ = ["TITLE_CHARS", "mem0_entries", "mem0_items", "title_from_text"]

TITLE_CHARS = 80
_EPOCH = datetime(1970, 1, 1, tzinfo=UTC)
_ID_KEYS = ("agent_id", "run_id", "actor_id", "role", "app_id")
_PREFIX = "mem0-"


def mem0_items(document: Any) -> list[Any] | None:
    """The items of a mem0 export, or ``None`` when ``document`` is not one."""
    if isinstance(document, list):
        return document
    if isinstance(document, dict) and isinstance(document.get("results"), list):
        return list(document["results"])
    return None


def _nbytes(text: str) -> int:
    return len(text.encode("utf-8"))


def title_from_text(text: str) -> str:
    """A title for a memory that has none: its first non-blank line, whitespace collapsed, cut at a
    word to :data:`TITLE_CHARS` characters (and the validator's byte cap) and marked ``…``."""
    first = next((line for line in text.split("\n") if line.strip()), "")
    words = first.split()
    whole = " ".join(words)
    if len(whole) <= TITLE_CHARS and _nbytes(whole) <= TITLE_MAX_BYTES:
        return whole
    room_chars, room_bytes = TITLE_CHARS - 1, TITLE_MAX_BYTES - _nbytes("…")
    cut = ""
    for word in words:
        longer = f"{cut} {word}" if cut else word
        if len(longer) > room_chars or _nbytes(longer) > room_bytes:
            break
        cut = longer
    if not cut:  # one long word (or text without spaces): cut it at a character
        for ch in whole:
            if len(cut) + 1 > room_chars or _nbytes(cut + ch) > room_bytes:
                break
            cut += ch
    return cut + "…"


def _ms(value: Any, name: str) -> int | None:
    if value is None:
        return None
    if not isinstance(value, str):
        raise LineProblem("malformed-record", f"{name} must be an ISO-8601 time")
    try:
        when = datetime.fromisoformat(value.strip())
    except ValueError:
        raise LineProblem("malformed-record", f"{name} {value!r} is not an ISO-8601 time") from None
    if when.tzinfo is None:
        when = when.replace(tzinfo=UTC)
    return (when - _EPOCH) // timedelta(milliseconds=1)


def _tags(item: dict[str, Any], notes: list[str]) -> tuple[str, ...]:
    metadata = item.get("metadata")
    if not isinstance(metadata, dict):
        metadata = {}
    categories = item.get("categories") or metadata.get("categories") or []
    if not isinstance(categories, list):
        notes.append("categories is not a list: not kept")
        return ()
    tags: list[str] = []
    for category in categories:
        tag = category.strip() if isinstance(category, str) else ""
        if not tag or "\x00" in tag or _nbytes(tag) > TAG_MAX_BYTES:
            notes.append(f"category {category!r} is not a valid tag: not kept")
        elif len(tags) == TAGS_MAX:
            notes.append(f"category {category!r} is past the {TAGS_MAX}-tag limit: not kept")
        elif tag not in tags:
            tags.append(tag)
    return tuple(tags)


def _description(item: dict[str, Any], notes: list[str]) -> str:
    kept: dict[str, Any] = {k: item[k] for k in _ID_KEYS if isinstance(item.get(k), str | int)}
    metadata = item.get("metadata")
    if isinstance(metadata, dict):
        rest = {k: v for k, v in metadata.items() if k != "categories"}
        if rest:
            kept["metadata"] = rest
    if not kept:
        return ""
    text = "mem0 " + encode_line(kept).decode("utf-8").rstrip("\n")
    if _nbytes(text) <= DESCRIPTION_MAX_BYTES:
        return text
    if "metadata" in kept:
        notes.append(f"metadata not kept: longer than a description holds ({DESCRIPTION_MAX_BYTES} bytes)")
        del kept["metadata"]
        if kept:
            text = "mem0 " + encode_line(kept).decode("utf-8").rstrip("\n")
            if _nbytes(text) <= DESCRIPTION_MAX_BYTES:
                return text
    notes.append("mem0 ids not kept: longer than a description holds")
    return ""


def _entry(item: Any, at: str, *, realm: str, identity: str | None, now_ms: int) -> Entry:
    if not isinstance(item, dict):
        return Entry(
            at, realm, None, problem=LineProblem("malformed-record", "a mem0 item must be an object")
        )
    raw_id = item.get("id")
    if isinstance(raw_id, bool) or not isinstance(raw_id, str | int) or not str(raw_id).strip():
        return Entry(
            at, realm, None, problem=LineProblem("malformed-record", "id must be a non-empty string")
        )
    memory_id = f"{_PREFIX}{str(raw_id).strip()}"
    try:
        check_texts(item, "item")
        if len(memory_id.encode("utf-8")) > MEMORY_ID_MAX_BYTES or any(
            ord(c) < 32 or ord(c) == 127 for c in memory_id
        ):
            most = MEMORY_ID_MAX_BYTES - len(_PREFIX)
            raise LineProblem(
                "malformed-record", f"id must be at most {most} bytes, without control characters"
            )
        text = item.get("memory")
        if not isinstance(text, str) or not text.strip():
            raise LineProblem("malformed-record", "memory must be a non-empty string")
        owner = identity or item.get("user_id") or item.get("agent_id")
        if owner is None:
            raise LineProblem("no-identity", "the memory has no user_id or agent_id: give --identity")
        try:
            owner = parse_identity({"identity": owner})
        except InvalidParams:
            raise LineProblem("malformed-record", f"{owner!r} is not a valid identity") from None
        created = _ms(item.get("created_at"), "created_at")
        updated = _ms(item.get("updated_at"), "updated_at")
        notes: list[str] = []
        title = title_from_text(text)
        created = now_ms if created is None else created
        record = Record(
            id=memory_id,
            scope=Scope.identity(realm, owner),
            kind=RecordKind.FACT,
            title=title,
            description=_description(item, notes),
            body=text,
            tags=_tags(item, notes),
            provenance=Provenance(author=APPLICATION),
            trust=Trust.AGENT_OBSERVED,
            status=Status.ACTIVE,
            created_at_ms=created,
            updated_at_ms=created if updated is None else updated,
            content_hash=content_hash(title, text),
        )
    except LineProblem as problem:
        return Entry(at, realm, memory_id, problem=problem)
    return Entry(at, realm, memory_id, record=record, notes=tuple(notes))


def mem0_entries(items: list[Any], *, realm: str, identity: str | None, now_ms: int) -> list[Entry]:
    """Every item of a mem0 export as an entry for ``realm`` (``item 1`` is the first).

    Args:
        identity: the identity every memory goes to (default: each item's ``user_id``, else
            its ``agent_id``).
        now_ms: the creation time of an item that has none.
    """
    return [
        _entry(item, f"item {n}", realm=realm, identity=identity, now_ms=now_ms)
        for n, item in enumerate(items, start=1)
    ]
