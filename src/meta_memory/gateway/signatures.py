"""What each JSON-RPC method accepts and returns, as JSON Schema: the method table's signatures.

Each :class:`Params` names every key its method's parser reads. The dispatcher refuses any other
key (-32602 naming it) before the parser runs, and the OpenRPC document (:mod:`.openrpc`) and
``docs/api.md`` are generated from these same objects, so what the API describes is what it
accepts. The parsers stay the one place each field's *rules* live (and their messages); a test
walks every method and checks that each declared key is really read by its parser.

Byte limits are on the UTF-8 encoding; JSON Schema has no keyword for that, so they are stated in
the description and as ``x-maxBytes``.
"""

from __future__ import annotations

import difflib
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from ..errors import InvalidParams
from ..memory.params import ANY_STATUS as LIST_ANY_STATUS
from ..memory.params import EXPIRED_STATUS as LIST_EXPIRED_STATUS
from ..memory.params import (
    EXPIRES_AT_MS_MAX,
    IDENTITY_MAX_BYTES,
    LIST_LIMIT_DEFAULT,
    LIST_LIMIT_MAX,
    MAX_ENTRIES_LIMIT,
    PURGE_IDS_MAX,
    QUERY_TEXT_MAX_BYTES,
    TTL_MS_MAX,
)
from ..memory.records import RecordKind, ScopeKind, Status
from ..memory.scopes import SCOPE_KINDS
from ..memory.validator import BODY_MAX_BYTES, TAG_MAX_BYTES, TAGS_MAX, TITLE_MAX_BYTES
from ..names import REALM_MAX_BYTES
from ..panel.params import TEXT_MAX_CHARS as PANEL_TEXT_MAX_CHARS
from ..panel.records import PREVIEW_CHARS
from ..review.decide import RATIONALE_MAX_BYTES
from ..sessions.params import MAX_SESSION_KEY_BYTES, RETIREMENT_CAUSES
from ..steward.audit_verdicts import AUDIT_ACTIONS
from ..steward.audit_verdicts import ID_MAX_BYTES as AUDIT_ID_MAX_BYTES
from ..timeline import QUERY_LIMIT_MAX

__all__ = ["Param", "Params", "Schema"]

Schema = Mapping[str, Any]


@dataclass(frozen=True)
class Param:
    """One named parameter (an OpenRPC content descriptor)."""

    name: str
    schema: Schema
    required: bool = False
    description: str = ""

    def to_openrpc(self) -> dict[str, Any]:
        out: dict[str, Any] = {"name": self.name, "required": self.required, "schema": dict(self.schema)}
        if self.description:
            out["description"] = self.description
        return out


@dataclass(frozen=True)
class Params:
    """A method's parameters: by name, in one JSON object (``null`` or absent when none is required).

    ``error_prefix`` is prepended to the refusal of an unknown key, for the method families whose
    -32602 messages carry one (the ledger's ``Invalid params: ``)."""

    fields: tuple[Param, ...] = ()
    error_prefix: str = ""
    example: Mapping[str, Any] | None = None
    _names: frozenset[str] = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        object.__setattr__(self, "_names", frozenset(p.name for p in self.fields))

    @property
    def names(self) -> frozenset[str]:
        return self._names

    def refuse_unknown(self, params: Any) -> None:
        """Raise -32602 naming the first key (in sorted order) this method does not take."""
        if not isinstance(params, dict) or not params:
            return
        unknown = sorted(k for k in params if k not in self._names)
        if not unknown:
            return
        key = unknown[0]
        accepted = sorted(self._names)
        close = difflib.get_close_matches(key, accepted, n=1)
        hint = (
            f"did you mean '{close[0]}'?"
            if close
            else (f"accepted: {', '.join(accepted)}" if accepted else "this method takes no params")
        )
        raise InvalidParams(
            f"{self.error_prefix}unknown param '{key}' ({hint})",
            data={"unknown": unknown, "accepted": accepted},
        )

    def schema(self) -> dict[str, Any]:
        """The whole params object as one JSON Schema."""
        return {
            "type": "object",
            "properties": {p.name: dict(p.schema) for p in self.fields},
            "required": [p.name for p in self.fields if p.required],
            "additionalProperties": False,
        }


# -- schema builders ----------------------------------------------------------------------------


def text(description: str = "", *, max_bytes: int | None = None, **extra: Any) -> dict[str, Any]:
    schema: dict[str, Any] = {"type": "string", "minLength": 1, **extra}
    if max_bytes is not None:
        schema["x-maxBytes"] = max_bytes
        description = f"{description} At most {max_bytes} bytes (UTF-8).".strip()
    if description:
        schema["description"] = description
    return schema


def any_text(description: str = "") -> dict[str, Any]:
    schema: dict[str, Any] = {"type": "string"}
    if description:
        schema["description"] = description
    return schema


def integer(
    description: str = "", *, minimum: int | None = None, maximum: int | None = None
) -> dict[str, Any]:
    return _bounded("integer", description, minimum, maximum)


def number(
    description: str = "", *, minimum: float | None = None, maximum: float | None = None
) -> dict[str, Any]:
    return _bounded("number", description, minimum, maximum)


def _bounded(kind: str, description: str, minimum: float | None, maximum: float | None) -> dict[str, Any]:
    schema: dict[str, Any] = {"type": kind}
    if minimum is not None:
        schema["minimum"] = minimum
    if maximum is not None:
        schema["maximum"] = maximum
    if description:
        schema["description"] = description
    return schema


def boolean(description: str = "", *, default: bool | None = None) -> dict[str, Any]:
    schema: dict[str, Any] = {"type": "boolean"}
    if default is not None:
        schema["default"] = default
    if description:
        schema["description"] = description
    return schema


def choice(values: tuple[str, ...], description: str = "") -> dict[str, Any]:
    schema: dict[str, Any] = {"type": "string", "enum": list(values)}
    if description:
        schema["description"] = description
    return schema


def array(items: Schema, description: str = "", *, max_items: int | None = None) -> dict[str, Any]:
    schema: dict[str, Any] = {"type": "array", "items": dict(items)}
    if max_items is not None:
        schema["maxItems"] = max_items
    if description:
        schema["description"] = description
    return schema


def obj(
    properties: Mapping[str, Schema] | None = None,
    *,
    required: tuple[str, ...] = (),
    description: str = "",
    closed: bool = False,
) -> dict[str, Any]:
    schema: dict[str, Any] = {"type": "object"}
    if properties:
        schema["properties"] = {k: dict(v) for k, v in properties.items()}
    if required:
        schema["required"] = list(required)
    if closed:
        schema["additionalProperties"] = False
    if description:
        schema["description"] = description
    return schema


def nullable(schema: Schema) -> dict[str, Any]:
    return {"anyOf": [dict(schema), {"type": "null"}]}


FREE_OBJECT = obj(description="A JSON object of the caller's; its keys are kept as given.")


# -- the shared fields --------------------------------------------------------------------------

IDENTITY = Param(
    "identity",
    text(
        "The identity whose memory this is (e.g. `lead:main`); no control characters.",
        max_bytes=IDENTITY_MAX_BYTES,
    ),
    required=True,
)
OPTIONAL_IDENTITY = Param("identity", IDENTITY.schema)
REALM = Param(
    "realm",
    text("The realm (default: `[agent_memory] realm` of the config); trimmed.", max_bytes=REALM_MAX_BYTES),
)
MEMORY_ID = Param("memory_id", text("A record id, as returned when it was written."), required=True)
TITLE = Param(
    "title", text("One line; whitespace runs become one space.", max_bytes=TITLE_MAX_BYTES), required=True
)
BODY = Param("body", text("The memory itself; trimmed.", max_bytes=BODY_MAX_BYTES), required=True)
TAGS = Param(
    "tags",
    array(
        text("A tag; trimmed and lowercased.", max_bytes=TAG_MAX_BYTES),
        "Tags: trimmed, lowercased, deduplicated and sorted.",
        max_items=TAGS_MAX,
    ),
)
SESSION_KEY = Param(
    "session_key",
    text("A session key from `meta/session/open`.", max_bytes=MAX_SESSION_KEY_BYTES),
    required=True,
)
LIMIT_NOTE = "Out-of-range values are clamped into the range."

RECORD = obj(
    {
        "memory_id": any_text("The record's id."),
        "title": any_text(),
        "body": any_text(),
        "tags": array(any_text()),
        "created_at_ms": integer("Unix milliseconds."),
        "updated_at_ms": integer("Unix milliseconds."),
        "scope_kind": choice(
            SCOPE_KINDS, "The scope it lives in: the identity's own, or one the identity shares."
        ),
        "scope_key": any_text("The identity, mob or operator of the scope (empty for the realm scope)."),
        "expires_at_ms": integer("When it expires (Unix ms); absent when it never does.", minimum=0),
    },
    required=(
        "memory_id",
        "title",
        "body",
        "tags",
        "created_at_ms",
        "updated_at_ms",
        "scope_kind",
        "scope_key",
    ),
    description="An agent-memory record.",
)
RECORDS = obj({"records": array(RECORD)}, required=("records",))


def open_result(description: str = "", **properties: Schema) -> dict[str, Any]:
    """A result object whose main keys are described; others may follow."""
    return obj(properties or None, description=description)


# -- the agent memory ---------------------------------------------------------------------------

WRITE_IDENTITY = Param(
    "identity",
    text(
        "The identity whose memory this is (e.g. `lead:main`); no control characters. Required "
        "unless `scope` names a shared scope.",
        max_bytes=IDENTITY_MAX_BYTES,
    ),
)
WRITE_SCOPE = Param(
    "scope",
    obj(
        {
            "kind": choice(SCOPE_KINDS),
            "key": any_text("The mob or operator (the identity for `identity`; none for `realm`)."),
        },
        required=("kind",),
        description=(
            'A shared scope to write instead of the identity\'s own: `{"kind": "mob", "key": "crew"}`, '
            "an operator scope (with `operator_scope` on), or the realm scope. An application write; "
            "the console needs `mob.memory.commit` (mob) or `agent.memory.admin` (operator, realm)."
        ),
    ),
)
EXPIRES_AT = Param(
    "expires_at_ms",
    nullable(
        integer(
            "When it expires (Unix ms, in the future): from then on it is never recalled or injected, "
            "lists as `expired`, and the upkeep deletes it. Exclusive with `ttl_ms`. On `update`, "
            "absent keeps the prior version's expiry and null removes it.",
            minimum=1,
            maximum=EXPIRES_AT_MS_MAX,
        )
    ),
)
TTL = Param(
    "ttl_ms",
    integer(
        "Expire this many milliseconds after the write. Exclusive with `expires_at_ms`.",
        minimum=1,
        maximum=TTL_MS_MAX,
    ),
)
REMEMBER = Params(
    (WRITE_IDENTITY, WRITE_SCOPE, TITLE, BODY, TAGS, REALM, EXPIRES_AT, TTL),
    example={"identity": "lead:main", "title": "Deploys", "body": "Deploys need approval.", "tags": ["ops"]},
)
RECALL = Params(
    (
        IDENTITY,
        REALM,
        Param(
            "selection",
            choice(("always", "contextual"), "`contextual` ranks by the query; `always` returns the newest."),
        ),
        Param("query_text", text("What to recall by.", max_bytes=QUERY_TEXT_MAX_BYTES)),
        Param("query_terms", array(text(), "Extra query terms.")),
        Param(
            "max_entries",
            integer(
                "How many records at most (default: `[agent_memory] max_entries`).",
                minimum=1,
                maximum=MAX_ENTRIES_LIMIT,
            ),
        ),
        Param(
            "tags",
            array(
                text("A tag; trimmed and lowercased.", max_bytes=TAG_MAX_BYTES),
                "Only records carrying every one of these tags (AND), filtered before the `max_entries` cut.",
                max_items=TAGS_MAX,
            ),
        ),
        Param(
            "scopes",
            array(
                choice(SCOPE_KINDS),
                "Only these kinds of the identity's scopes (default: its own and every shared scope it "
                "reads: its mob, the operator scopes with `operator_scope` on, the realm scope).",
            ),
        ),
        Param(
            "wait_for_vectors",
            boolean(
                'With `recall = "hybrid"`, wait (at most `recall_timeout_ms`) until the realm\'s vectors '
                "cover every record acknowledged before this call, then rank: read-your-writes by "
                "meaning. Past the bound the recall ranks with what is embedded (`vectors_behind`).",
                default=False,
            ),
        ),
        Param(
            "min_score",
            number(
                "Only records scoring at least this (each record's `score`); contextual recall only. "
                "The list is cut where the scores fall below it, so it may hold fewer than `max_entries`.",
                minimum=0,
                maximum=1,
            ),
        ),
    ),
    example={"identity": "lead:main", "query_text": "how do deploys work?", "max_entries": 8},
)
RECALLED_RECORD = obj(
    {
        **RECORD["properties"],
        "score": nullable(
            number(
                "Its relevance to the query, 0 to 1, never rising down the list: lexical recall's BM25 "
                "over the query's best; hybrid recall's fusion, 0.7 x BM25 over the best + 0.3 x cosine "
                "placed between the least and the best neighbour's, raised where the lexical head the "
                "fusion keeps in place ranks it above a better-scoring record. Compare scores within one recall. Null for `always`.",
                minimum=0,
                maximum=1,
            )
        ),
    },
    required=(*RECORD["required"], "score"),
    description="A recalled record and its score.",
)
RECALLED = obj(
    {
        "records": array(RECALLED_RECORD),
        "vectors_behind": nullable(
            boolean(
                "Whether the vectors this recall ranked by missed records acknowledged before it (still "
                "being embedded, so ranked lexically only); null for lexical recall (no vectors)."
            )
        ),
    },
    required=("records", "vectors_behind"),
)
UPDATE = Params(
    (WRITE_IDENTITY, WRITE_SCOPE, MEMORY_ID, TITLE, BODY, TAGS, REALM, EXPIRES_AT, TTL),
    example={
        "identity": "lead:main",
        "memory_id": "<id>",
        "title": "Deploys",
        "body": "Deploys need two approvals.",
    },
)
FORGET = Params(
    (WRITE_IDENTITY, WRITE_SCOPE, MEMORY_ID, REALM), example={"identity": "lead:main", "memory_id": "<id>"}
)
FORGET_RESULT = obj(
    {"memory_id": any_text(), "deleted": boolean("False when no such active record existed.")},
    required=("memory_id", "deleted"),
)
PURGE = Params(
    (
        IDENTITY,
        Param(
            "memory_id",
            text(
                "Purge this record and its whole lineage (its versions, released successors, "
                "quarantined originals, promoted copies). Exclusive with `memory_ids` and `all`."
            ),
        ),
        Param(
            "memory_ids",
            array(
                text(),
                "Purge these records and their lineages, in one purge (a LangGraph namespace). "
                "Exclusive with `memory_id` and `all`.",
                max_items=PURGE_IDS_MAX,
            ),
        ),
        Param(
            "all",
            boolean(
                "true: purge everything of the identity in the realm (its scope, what its agent wrote "
                "elsewhere, and what was made from either). Exclusive with `memory_id` and `memory_ids`."
            ),
        ),
        REALM,
    ),
    example={"identity": "lead:main", "memory_id": "<id>"},
)
PURGED_RECORD = obj(
    {
        "memory_id": any_text(),
        "content_hash": any_text("The purged content's sha256, as the record held it."),
        "status": any_text("Its status when it was purged."),
        "scope": obj({"kind": any_text(), "key": any_text()}, required=("kind", "key")),
    },
    required=("memory_id", "content_hash", "status", "scope"),
)
PURGE_RESULT = obj(
    {
        "receipt_id": nullable(
            any_text(
                "The receipt, kept as the realm's `purge` audit row; null when the realm does not exist."
            )
        ),
        "realm": any_text(),
        "identity": any_text(),
        "memory_ids": nullable(
            array(any_text(), "The records asked for; null for a purge of the whole identity.")
        ),
        "purged_at_ms": integer(minimum=0),
        "by": obj(
            description="Who purged: `kind` (application, console, or expiry for the upkeep) and the authenticated `principal` (`local:<user>` for `meta_gateway purge` on a state dir)."
        ),
        "records": array(PURGED_RECORD, "Every record erased: ids and content hashes, never content."),
        "removed": obj(
            {
                name: integer(minimum=0)
                for name in (
                    "audit_rows",
                    "injections",
                    "proposals",
                    "promotions",
                    "harvests",
                    "sessions",
                    "verdicts",
                    "vectors",
                    "events",
                )
            },
            description="How many rows of each other kind the purge deleted.",
        ),
    },
    required=("receipt_id", "realm", "identity", "memory_ids", "purged_at_ms", "by", "records", "removed"),
)
UPDATE_RESULT = obj(
    {"memory_id": any_text("The new record's id."), "supersedes": any_text("The id it replaced.")},
    required=("memory_id", "supersedes"),
)

# meta/agent_memory/list and get (the management reads: memory/params.py has their rules).
_MANAGED_IDENTITY = Param(
    "identity",
    text(
        IDENTITY.schema["description"] + " Required on the application surface; on the console, leave it "
        "out to read the realm's records as far as your grants reach.",
        max_bytes=IDENTITY_MAX_BYTES,
    ),
)


def _tag_filter(name: str, description: str) -> Param:
    return Param(
        name,
        array(
            text("A tag; trimmed and lowercased.", max_bytes=TAG_MAX_BYTES), description, max_items=TAGS_MAX
        ),
    )


def _window(field: str, side: str) -> Param:
    bound = "at or after (inclusive)" if side == "after" else "strictly before (exclusive)"
    return Param(
        f"{field}_{side}_ms", integer(f"Records {field} {bound} this Unix ms.", minimum=0, maximum=2**63 - 1)
    )


AGENT_LIST = Params(
    (
        _MANAGED_IDENTITY,
        REALM,
        Param(
            "status",
            choice(
                (*(s.value for s in Status), LIST_EXPIRED_STATUS, LIST_ANY_STATUS),
                "Default `active` (not expired); `expired`: active records whose expiry has come, "
                "until the upkeep deletes them; `any` lists every status.",
            ),
        ),
        Param("kind", choice(tuple(k.value for k in RecordKind))),
        _tag_filter("tags_any", "Records carrying at least one of these tags."),
        _tag_filter("tags_all", "Records carrying every one of these tags."),
        _window("created", "after"),
        _window("created", "before"),
        _window("updated", "after"),
        _window("updated", "before"),
        Param(
            "limit",
            integer(f"Records per page (default {LIST_LIMIT_DEFAULT}).", minimum=1, maximum=LIST_LIMIT_MAX),
        ),
        Param("cursor", text("`next_cursor` of the previous page.")),
    ),
    example={"identity": "lead:main", "tags_any": ["ops"], "limit": 20},
)
MANAGED_RECORD = obj(
    {
        **RECORD["properties"],
        "realm": any_text(),
        "kind": any_text(),
        "description": any_text(),
        "status": choice(
            (*(s.value for s in Status), LIST_EXPIRED_STATUS),
            "`expired`: active, and its `expires_at_ms` has come (never recalled; deleted by the upkeep).",
        ),
        "expires_at_ms": nullable(integer("When it expires (Unix ms); null: never.", minimum=0)),
        "quarantine_reason": nullable(any_text()),
        "trust": any_text(),
        "author": FREE_OBJECT,
        "supersedes": nullable(any_text()),
        "superseded_by": nullable(any_text()),
        "derived_from": array(any_text()),
        "ever_quarantined": boolean(),
        "content_hash": any_text(),
    },
    required=(*RECORD["required"], "realm", "status", "kind", "trust", "author"),
    description="An agent-memory record with what managing it needs.",
)
AGENT_LIST_RESULT = obj(
    {
        "realm": any_text(),
        "records": array(MANAGED_RECORD, "Newest updated first (then memory id, descending)."),
        "next_cursor": nullable(any_text("Pass as `cursor` for the next page; null on the last page.")),
    },
    required=("realm", "records", "next_cursor"),
)
AGENT_GET = Params(
    (_MANAGED_IDENTITY, MEMORY_ID, REALM), example={"identity": "lead:main", "memory_id": "<id>"}
)
AGENT_GET_RESULT = obj(
    {
        "realm": any_text(),
        "record": MANAGED_RECORD,
        "successor": nullable(
            any_text("The current successor's id (superseded or released, followed to the end).")
        ),
    },
    required=("realm", "record", "successor"),
)
HISTORY_VERSION = obj(
    {
        **MANAGED_RECORD["properties"],
        "title": nullable(any_text()),
        "description": nullable(any_text()),
        "body": nullable(any_text()),
        "tags": nullable(array(any_text())),
        "ended": nullable(
            choice(
                ("superseded", "released", "discarded", "forgotten", "expired"),
                "Why this version ended: updated, released from quarantine, discarded by a "
                "reviewer, forgotten, expired (until the upkeep deletes it); null while it is current.",
            )
        ),
        "content_withheld": boolean(
            "Its title, description, body and tags are null: quarantined content, and the caller "
            "lacks memory.quarantine.review (the console)."
        ),
    },
    required=(*MANAGED_RECORD["required"], "ended", "content_withheld"),
    description="One version of a record's lineage.",
)
AGENT_HISTORY_RESULT = obj(
    {
        "realm": any_text(),
        "memory_id": any_text("The id asked for."),
        "versions": array(HISTORY_VERSION, "Oldest first; the last is the current one."),
    },
    required=("realm", "memory_id", "versions"),
)

# -- the runtime --------------------------------------------------------------------------------

NO_PARAMS = Params()
STATUS_RESULT = open_result(
    "The runtime's status. For an application key confined to realms, `state_dir` and each storage "
    "slot's `detail` (paths, a database server) are left out.",
    contract_version=any_text(),
    version=any_text(),
    state_dir=any_text(),
    features=FREE_OBJECT,
    storage=FREE_OBJECT,
)
CAPABILITIES_RESULT = open_result(
    "What this surface offers to this caller.",
    contract_version=any_text(),
    methods=array(any_text(), "Method names, sorted."),
    storage=FREE_OBJECT,
)
DISCOVER_RESULT = open_result(
    "An OpenRPC 1.x document describing this surface.",
    openrpc=any_text(),
    info=FREE_OBJECT,
    methods=array(FREE_OBJECT),
)
DOCTOR = Params(
    (
        Param(
            "state_dir",
            text("The state directory to diagnose (over HTTP: this gateway's own).", max_bytes=4096),
            required=True,
        ),
        Param("identity", text("Also count this identity's records.")),
    ),
    example={"state_dir": ".meta/state"},
)
DOCTOR_RESULT = open_result(
    "The storage doctor's report.",
    state_dir=any_text(),
    diagnosis=obj(
        {"findings": array(FREE_OBJECT), "inventory": array(FREE_OBJECT, "One entry per realm.")},
        required=("findings", "inventory"),
    ),
    storage=nullable(FREE_OBJECT),
)
TIMELINE_QUERY = Params(
    (
        Param("after", text("Return events after this event_id (e.g. `console-evt-42`).")),
        Param("limit", integer("How many events at most (default 100).", minimum=1, maximum=QUERY_LIMIT_MAX)),
    ),
    example={"limit": 50},
)
TIMELINE_RESULT = open_result(
    "Stored timeline events, oldest first.",
    events=array(FREE_OBJECT),
    next_after=nullable(any_text()),
)

# -- the assertion ledger -----------------------------------------------------------------------

LEDGER = "Invalid params: "
LEDGER_TOKEN = "Trimmed and lowercased; whitespace runs become `_`."
STORE_NAME = text("One of the ledger's stores (default `semantic`).")
MEMORY_INDEX = Params(
    (
        Param("entity", text(LEDGER_TOKEN), required=True),
        Param("topic", text(LEDGER_TOKEN), required=True),
        Param("store", STORE_NAME),
        Param("fact", text("The fact; required unless `conflict` is true.")),
        Param("metadata", FREE_OBJECT),
        Param("conflict", boolean("Record a conflict signal for the key.")),
        Param("conflict_reason", any_text("Why the key is in conflict.")),
    ),
    error_prefix=LEDGER,
    example={"entity": "deploy", "topic": "window", "fact": "Tuesdays only"},
)
MEMORY_INDEX_RESULT = obj(
    {
        "entity": any_text(),
        "topic": any_text(),
        "store": any_text(),
        "assertion_id": nullable(any_text()),
        "conflict_active": boolean(),
    },
    required=("entity", "topic", "store", "assertion_id", "conflict_active"),
)
MEMORY_QUERY = Params(
    (
        Param("entity", any_text("Filter by entity.")),
        Param("topic", any_text("Filter by topic.")),
        Param("store", any_text("Filter by store.")),
        Param("query", any_text("Substring filter over entity, topic and fact.")),
    ),
    error_prefix=LEDGER,
    example={"query": "deploy"},
)
ASSERTION = obj(
    {
        "assertion_id": any_text(),
        "entity": any_text(),
        "topic": any_text(),
        "store": any_text(),
        "fact": any_text(),
        "metadata": nullable(FREE_OBJECT),
        "indexed_at_ms": integer(),
    },
    required=("assertion_id", "entity", "topic", "store", "fact", "metadata", "indexed_at_ms"),
)
CONFLICT = obj(
    {
        "entity": any_text(),
        "topic": any_text(),
        "store": any_text(),
        "reason": nullable(any_text()),
        "updated_at_ms": integer(),
    },
    required=("entity", "topic", "store", "reason", "updated_at_ms"),
)
MEMORY_QUERY_RESULT = obj(
    {"assertions": array(ASSERTION), "conflicts": array(CONFLICT)}, required=("assertions", "conflicts")
)
MEMORY_STORES = Params(error_prefix=LEDGER)
MEMORY_STORES_RESULT = obj(
    {
        "stores": array(
            obj({"store": any_text(), "record_count": integer()}, required=("store", "record_count"))
        )
    },
    required=("stores",),
)

# -- host sessions ------------------------------------------------------------------------------

SESSION_OPEN = Params(
    (IDENTITY, REALM, Param("mob", text("The mob the session acts in (for mob-scoped proposals)."))),
    example={"identity": "lead:main"},
)
SESSION_KEY_RESULT = obj({"session_key": any_text()}, required=("session_key",))
SESSION_OPEN_RESULT = obj(
    {
        "session_key": any_text(),
        "identity": any_text(),
        "realm": any_text("The realm the session reads and writes."),
    },
    required=("session_key", "identity", "realm"),
)
SESSION_REF = Params((SESSION_KEY,), example={"session_key": "<key>"})
CONTEXT_RESULT = obj(
    {
        "text": nullable(any_text("The memory header to put in the prompt (null: nothing to inject).")),
        "injected": array(any_text(), "Ids of the records injected."),
    },
    required=("text", "injected"),
)
SESSION_TURN = Params(
    (SESSION_KEY, Param("message", any_text("The user's message."), required=True)),
    example={"session_key": "<key>", "message": "what is the deploy rule?"},
)
TURN_RESULT = obj(
    {"text": any_text("The message with the memory context."), "injected": array(any_text())},
    required=("text", "injected"),
)
PROVENANCE = obj(
    {"kind": any_text(), "source_id": any_text()},
    description="Where the tool's output came from (classified trusted or untrusted by the config).",
)
SESSION_TOOL_RESULT = Params(
    (
        Param(
            "session_key",
            text(
                "The session; omit it (and give `identity`, and `realm` if not the default) before the "
                "host has one.",
                max_bytes=MAX_SESSION_KEY_BYTES,
            ),
        ),
        OPTIONAL_IDENTITY,
        REALM,
        Param("tool_name", text("The tool whose result this is."), required=True),
        Param("provenance", PROVENANCE),
        Param("server_tool", boolean("A tool the LLM provider ran.", default=False)),
        Param("is_error", boolean("The tool failed.", default=False)),
    ),
    example={"session_key": "<key>", "tool_name": "web_fetch"},
)
TOOL_RESULT_RESULT = obj(
    {"trusted": boolean(), "tainted": boolean("Whether the session is tainted now.")},
    required=("trusted", "tainted"),
)
SESSION_MEMORY_TOOL = Params(
    (
        SESSION_KEY,
        Param(
            "arguments",
            {"description": "The LLM's `memory` tool arguments: an object, or its JSON text."},
            required=True,
        ),
    ),
    example={"session_key": "<key>", "arguments": {"command": "view"}},
)
MEMORY_TOOL_RESULT = obj(
    {
        "content": any_text("What the LLM reads back."),
        "is_error": boolean(),
        "outcome": choice(("stored", "quarantined", "none")),
    },
    required=("content", "is_error", "outcome"),
)
SESSION_CLOSE = Params(
    (
        SESSION_KEY,
        Param(
            "cause",
            choice(
                RETIREMENT_CAUSES,
                "The session ends because its identity retires (`retired`) or goes on as a fresh instance "
                "(`respawned`): with the steward on, an exit-interview harvest of the identity's memory is "
                "queued for its next dream.",
            ),
        ),
    ),
    example={"session_key": "<key>", "cause": "retired"},
)
CLOSED_RESULT = obj(
    {
        "closed": boolean(),
        "harvest": nullable(
            choice(
                ("queued", "steward_disabled"),
                "With a `cause`: `queued`, or `steward_disabled` (nothing queued: the steward is off). "
                "Null without one.",
            )
        ),
    },
    required=("closed", "harvest"),
)
SESSION_PEER_MESSAGE = Params(
    (
        SESSION_KEY,
        Param(
            "sender_session_key",
            text(
                "The session of the agent whose message the host delivered into this one.",
                max_bytes=MAX_SESSION_KEY_BYTES,
            ),
            required=True,
        ),
    ),
    example={"session_key": "<key>", "sender_session_key": "<another key>"},
)
PEER_MESSAGE_RESULT = obj(
    {"tainted": boolean("Whether the receiving session is tainted now.")}, required=("tainted",)
)
TOOL_DEFINITIONS = Params(
    (
        Param(
            "format",
            choice(("anthropic", "json_schema", "openai", "openai_responses"), "Default `json_schema`."),
        ),
    ),
    example={"format": "openai"},
)
TOOL_DEFINITIONS_RESULT = obj({"tools": array(FREE_OBJECT)}, required=("tools",))

# -- approval gating ----------------------------------------------------------------------------

GATING_EVALUATE = Params(
    (
        Param("action", text("What the actor wants to do."), required=True),
        Param("actor_id", text("Who wants to do it."), required=True),
        Param("risk_tier", choice(("r0", "r1", "r2", "r3"), "Case-insensitive."), required=True),
        Param("rationale", any_text()),
        Param("requested_approver", any_text()),
        Param("approval_recipient", any_text()),
        Param("approval_channel", any_text()),
        Param("approval_timeout_ms", integer("Clamped into the configured bounds.", minimum=0)),
        Param("entity", any_text("The ledger key's entity the action touches.")),
        Param("topic", any_text("The ledger key's topic the action touches.")),
    ),
    error_prefix=LEDGER,
    example={"action": "deploy", "actor_id": "lead:main", "risk_tier": "r2"},
)
GATING_EVALUATE_RESULT = open_result(
    "The gate's verdict.",
    action_id=any_text(),
    outcome=any_text(),
    pending_id=nullable(any_text()),
    deadline_at_ms=nullable(integer()),
    audit_id=any_text(),
)
GATING_DECIDE = Params(
    (
        Param("pending_id", text(), required=True),
        Param("approver_id", text(), required=True),
        Param("decision", choice(("approve", "reject", "escalate"), "Case-insensitive."), required=True),
        Param("reason", any_text()),
    ),
    error_prefix=LEDGER,
    example={"pending_id": "<id>", "approver_id": "ops:alice", "decision": "approve"},
)
GATING_DECIDE_RESULT = open_result(
    "The decision as recorded.",
    pending_id=any_text(),
    action_id=any_text(),
    approver_id=any_text(),
    decision=choice(("approve", "reject", "escalate")),
    outcome=choice(
        ("allowed", "safe_draft", "pending_approval"),
        "`allowed` (approve), `safe_draft` (reject) or `pending_approval` (escalate).",
    ),
    decided_at_ms=integer(),
    reason=nullable(any_text()),
    next_pending_id=nullable(any_text("The escalation's new pending id.")),
    audit_id=any_text(),
)
GATING_PENDING = Params(error_prefix=LEDGER)
GATING_PENDING_RESULT = obj({"pending": array(FREE_OBJECT)}, required=("pending",))
GATING_AUDIT = Params(
    (Param("limit", integer("How many entries, newest first (default 50).", minimum=1, maximum=500)),),
    error_prefix=LEDGER,
    example={"limit": 20},
)
GATING_AUDIT_RESULT = obj({"entries": array(FREE_OBJECT)}, required=("entries",))

# -- review and the steward ---------------------------------------------------------------------

QUARANTINE_DECIDE = Params(
    (
        IDENTITY,
        REALM,
        MEMORY_ID,
        Param("verdict", choice(("release", "tombstone")), required=True),
        Param(
            "expected_content_hash",
            text(
                "The content hash of the record as you reviewed it (64 lowercase hex).",
                pattern="^[0-9a-f]{64}$",
            ),
            required=True,
        ),
        Param("rationale", any_text("Why.")),
    ),
    example={
        "identity": "lead:main",
        "memory_id": "<id>",
        "verdict": "release",
        "expected_content_hash": "0" * 64,
    },
)
REVIEW_RECEIPT = open_result(
    "A record as it stands after the decision (no body).",
    memory_id=any_text(),
    status=FREE_OBJECT,
    trust=any_text(),
    ever_quarantined=boolean(),
    content_hash=any_text(),
    supersedes=nullable(any_text()),
    superseded_by=nullable(any_text()),
    derived_from=array(any_text()),
)
QUARANTINE_DECIDE_RESULT = open_result(
    "What the decision did.",
    outcome=choice(("released", "tombstoned", "already_released", "already_tombstoned")),
    origin=REVIEW_RECEIPT,
    successor=nullable(REVIEW_RECEIPT),
    decision=obj(
        {"audit_token": any_text(), "decided_at_ms": integer(), "review": FREE_OBJECT},
        description="The decision as audited: its audit token, when, and the review (verdict, "
        "reviewer, the hash reviewed, the promotions it expired or invalidated).",
    ),
)
AUDIT_VERDICT_RESOLVE = Params(
    (
        REALM,
        Param(
            "run_id",
            text("The dream run whose verdict this is.", max_bytes=AUDIT_ID_MAX_BYTES),
            required=True,
        ),
        Param(
            "record_id",
            text("The record the verdict judges.", max_bytes=AUDIT_ID_MAX_BYTES),
            required=True,
        ),
        Param(
            "action",
            choice(
                AUDIT_ACTIONS,
                "`acknowledge` closes the verdict, the record unchanged; `tombstone` acts on a `dead_weight` "
                "verdict: the record is tombstoned, and every open verdict on it closes.",
            ),
            required=True,
        ),
        Param(
            "expected_content_hash",
            text(
                "The content hash of the record as you read it (64 lowercase hex); required to tombstone.",
                pattern="^[0-9a-f]{64}$",
            ),
        ),
        Param("rationale", any_text(f"Why. At most {RATIONALE_MAX_BYTES} bytes (UTF-8).")),
    ),
    example={"run_id": "<run id>", "record_id": "<id>", "action": "acknowledge"},
)
AUDIT_VERDICT_RESOLVE_RESULT = open_result(
    "What the resolution did.",
    outcome=choice(("acknowledged", "tombstoned", "already_acknowledged", "already_tombstoned")),
    verdict=obj(
        {
            "realm": any_text(),
            "run_id": any_text(),
            "record_id": any_text(),
            "verdict": choice(("load_bearing", "dead_weight")),
            "rationale": nullable(any_text("The steward's.")),
            "created_at_ms": integer(),
            "status": choice(("acknowledged", "tombstoned"), "How the verdict stands now."),
        },
        description="The verdict resolved.",
    ),
    record=nullable(REVIEW_RECEIPT),
    decision=obj(
        {"audit_token": any_text(), "decided_at_ms": integer(), "resolution": FREE_OBJECT},
        description="The resolution as audited: its audit token, when, and the resolution (action, reviewer, "
        "verdict, the hash read, rationale, `closed_runs`: the runs whose verdicts on the record it closed).",
    ),
)
PROPOSAL_ID = Param("proposal_id", text("A proposal id (`prop-...`), as the panel lists it."), required=True)
PROPOSAL_FIELDS: dict[str, Schema] = {
    "proposal_id": any_text(),
    "scope_kind": choice(("mob", "operator"), "The scope an accept commits into."),
    "scope_key": any_text("The mob or operator."),
    "kind": any_text(),
    "title": any_text(),
    "author": FREE_OBJECT,
    "status": choice(("pending", "held", "accepted", "rejected")),
    "tainted": boolean("Made by a session that had read untrusted content: an accept waits on a gate."),
    "created_at_ms": integer(),
    "content_hash": any_text("The hash of its title and body: what a decision is bound to."),
}
PROPOSALS_DECIDE = Params(
    (
        REALM,
        PROPOSAL_ID,
        Param("verdict", choice(("accept", "reject")), required=True),
        Param(
            "expected_content_hash",
            text(
                "The content hash of the proposal as you read it (64 lowercase hex).",
                pattern="^[0-9a-f]{64}$",
            ),
            required=True,
        ),
        Param("rationale", any_text(f"Why. At most {RATIONALE_MAX_BYTES} bytes (UTF-8).")),
    ),
    example={"proposal_id": "<proposal_id>", "verdict": "accept", "expected_content_hash": "0" * 64},
)
PROPOSALS_DECIDE_RESULT = open_result(
    "What the decision did.",
    realm=any_text(),
    outcome=choice(
        ("accepted", "rejected", "gated", "already_accepted", "already_rejected", "already_gated"),
        "`gated`: a tainted proposal's accept waits on a gated promotion a console reviewer decides "
        "(`meta/gating/decide`); `already_...`: a replay, nothing written.",
    ),
    proposal=obj(PROPOSAL_FIELDS, description="The proposal as it stands now (no body)."),
    record=nullable(REVIEW_RECEIPT),
    pending_id=nullable(any_text("The gated promotion waiting on a reviewer, while one does.")),
    decision=obj(
        {"audit_token": any_text(), "decided_at_ms": integer(), "review": FREE_OBJECT},
        description="The decision as audited: its audit token, when, and the review (verdict, outcome, "
        "reviewer, the hash read, the record committed, the promotions it expired or invalidated).",
    ),
)
PROPOSE = Params(
    (
        REALM,
        Param(
            "scope",
            obj(
                {
                    "kind": choice(("mob", "operator")),
                    "key": text("The mob or operator.", max_bytes=IDENTITY_MAX_BYTES),
                },
                required=("kind", "key"),
                closed=True,
                description="The scope an accept would commit into; `operator` needs "
                '`[agent_memory] operator_scope = "provisional"`.',
            ),
            required=True,
        ),
        TITLE,
        BODY,
        Param("description", any_text("A one-line summary. At most 400 bytes (UTF-8).")),
        TAGS,
        Param("kind", choice(tuple(k.value for k in RecordKind), "Default `fact`.")),
    ),
    example={
        "scope": {"kind": "operator", "key": "acme"},
        "title": "Billing",
        "body": "Invoices go out monthly.",
    },
)
PROPOSE_RESULT = obj(
    {
        "proposal_id": any_text(),
        "realm": any_text(),
        "scope_kind": any_text(),
        "scope_key": any_text(),
        "status": any_text(),
        "tainted": boolean(),
        "content_hash": any_text(),
    },
    required=("proposal_id", "realm", "scope_kind", "scope_key", "status", "tainted", "content_hash"),
)
DREAM = Params(
    (REALM, Param("mob", text("Dream over this mob's records only."))),
    example={"realm": "default"},
)
DREAM_RESULT = open_result(
    "The dream run's report: what each item's verdict came to, and what the run committed.",
    realm=any_text(),
    partition=any_text("The realm, or `mob:<mob>` for a dream over one mob."),
    status=choice(("completed", "skipped")),
    run_id=nullable(any_text("Null for a dream that did not run.")),
    reviewer=nullable(any_text("Which reviewer judged the items.")),
    started_at_ms=nullable(integer()),
    completed_at_ms=nullable(integer()),
    ops_committed=integer(),
    skipped_reason=nullable(any_text()),
    reviewer_error=nullable(any_text()),
    outcomes=array(FREE_OBJECT, "One per item judged: its subject, verdict and what became of it."),
    expired_promotions=array(any_text(), "Gated promotions past their seven-day deadline, expired now."),
    audit_verdicts=integer("How many audit verdicts the run recorded."),
)

# -- the console panel --------------------------------------------------------------------------

PANEL_LIMIT = "How many rows at most. " + LIMIT_NOTE
PANEL_RECORDS = Params(
    (
        REALM,
        Param("scope", choice(tuple(k.value for k in ScopeKind))),
        OPTIONAL_IDENTITY,
        Param("scope_key", any_text("The scope's key (the identity, mob or operator).")),
        Param("status", choice(tuple(s.value for s in Status))),
        Param(
            "text",
            {
                **any_text(
                    "Rows whose title or body holds this text, ignoring case; `%` and `_` are no "
                    "wildcards. Trimmed; blank means no filter. A body whose content needs "
                    "quarantine review is never matched (its record matches by title only). "
                    f"At most {PANEL_TEXT_MAX_CHARS} characters."
                ),
                "maxLength": PANEL_TEXT_MAX_CHARS,
            },
        ),
        Param("limit", integer(PANEL_LIMIT + " Default 50, at most 200.")),
        Param("cursor", text("`next_cursor` of the previous page.")),
    ),
    example={"identity": "lead:main", "text": "deploy", "limit": 20},
)
PANEL_RECORD = Params((MEMORY_ID, REALM), example={"memory_id": "<id>"})
PANEL_PROPOSAL = Params((PROPOSAL_ID, REALM), example={"proposal_id": "<proposal_id>"})
PANEL_PROPOSAL_RESULT = open_result(
    "One proposal in full, as a reviewer reads it before deciding.",
    realm=any_text(),
    proposal=obj(
        {
            **PROPOSAL_FIELDS,
            "description": any_text(),
            "body": any_text(),
            "tags": array(any_text()),
            "body_bytes": integer(),
        }
    ),
    realms=array(any_text(), "The realms the view covers."),
)


def listing(limit: str | None) -> Params:
    fields = (REALM,) if limit is None else (REALM, Param("limit", integer(PANEL_LIMIT + " " + limit)))
    return Params(fields, example={})


PANEL_RESULT = open_result("A console panel view.", realms=array(any_text(), "The realms the view covers."))
PANEL_RECORDS_RESULT = open_result(
    "Records as list rows, newest updated first.",
    records=array(
        obj(
            {
                "realm": any_text(),
                "memory_id": any_text(),
                "scope_kind": any_text(),
                "scope_key": any_text(),
                "title": any_text(),
                "status": any_text(),
                "updated_at_ms": integer(),
                "body_bytes": integer("The body's size in bytes (UTF-8): a list row carries no body."),
                "body_preview": nullable(
                    any_text(
                        f"The body's first {PREVIEW_CHARS} characters on one line, ending in `…` "
                        "when more follows; null when its content needs quarantine review."
                    )
                ),
            },
            description="One record without its body; its other fields as `meta/memory/panel/record` has them.",
        )
    ),
    next_cursor=nullable(any_text("Pass as `cursor` for the next page; null on the last page.")),
    realms=array(any_text(), "The realms the view covers."),
)


# -- the table ----------------------------------------------------------------------------------


@dataclass(frozen=True)
class Signature:
    params: Params
    result: Schema
    summary: str


def _panel(summary: str, params: Params) -> Signature:
    return Signature(params, PANEL_RESULT, summary)


SIGNATURES: Mapping[str, Signature] = {
    "rpc.discover": Signature(NO_PARAMS, DISCOVER_RESULT, "This surface's OpenRPC document."),
    "meta/status": Signature(
        NO_PARAMS, STATUS_RESULT, "The runtime's version, state dir, features and storage."
    ),
    "meta/capabilities": Signature(
        NO_PARAMS, CAPABILITIES_RESULT, "The methods this surface offers this caller, and the storage census."
    ),
    "meta/memory/index": Signature(
        MEMORY_INDEX, MEMORY_INDEX_RESULT, "Record a fact (or a conflict signal) in the assertion ledger."
    ),
    "meta/memory/query": Signature(
        MEMORY_QUERY, MEMORY_QUERY_RESULT, "Read the ledger's assertions and conflicts."
    ),
    "meta/memory/stores": Signature(
        MEMORY_STORES, MEMORY_STORES_RESULT, "The ledger's stores and their sizes."
    ),
    "meta/agent_memory/remember": Signature(REMEMBER, RECORD, "Write a memory for an identity."),
    "meta/agent_memory/recall": Signature(RECALL, RECALLED, "Recall an identity's memories by context."),
    "meta/agent_memory/update": Signature(
        UPDATE, UPDATE_RESULT, "Replace a memory: the new record supersedes the old."
    ),
    "meta/agent_memory/forget": Signature(FORGET, FORGET_RESULT, "Forget a memory (it is tombstoned)."),
    "meta/agent_memory/purge": Signature(
        PURGE,
        PURGE_RESULT,
        "Erase a memory and its lineage, or everything of an identity, for real: no file or table "
        "keeps the text; a receipt of ids and content hashes remains.",
    ),
    "meta/agent_memory/propose": Signature(
        PROPOSE, PROPOSE_RESULT, "Queue a proposal for a mob or operator scope, for an operator to decide."
    ),
    "meta/agent_memory/list": Signature(
        AGENT_LIST, AGENT_LIST_RESULT, "List an identity's memories by filter, newest first, in keyset pages."
    ),
    "meta/agent_memory/get": Signature(
        AGENT_GET, AGENT_GET_RESULT, "One memory by id, with the id of its current successor."
    ),
    "meta/agent_memory/history": Signature(
        AGENT_GET,
        AGENT_HISTORY_RESULT,
        "A memory's lineage, oldest first: every version, with the reason each ended.",
    ),
    "meta/session/open": Signature(SESSION_OPEN, SESSION_OPEN_RESULT, "Open a host session for an identity."),
    "meta/session/build_context": Signature(
        SESSION_REF, CONTEXT_RESULT, "The memory context to put in the session's next prompt."
    ),
    "meta/session/turn": Signature(
        SESSION_TURN, TURN_RESULT, "A user turn, with the memory context it recalls."
    ),
    "meta/session/tool_result": Signature(
        SESSION_TOOL_RESULT, TOOL_RESULT_RESULT, "Report a tool result before the LLM reads it (taint)."
    ),
    "meta/session/memory_tool": Signature(
        SESSION_MEMORY_TOOL, MEMORY_TOOL_RESULT, "Run the LLM's `memory` tool call for the session."
    ),
    "meta/session/peer_message": Signature(
        SESSION_PEER_MESSAGE,
        PEER_MESSAGE_RESULT,
        "Report a peer agent's message delivered into the session (a tainted or unknown sender taints it).",
    ),
    "meta/session/reset": Signature(SESSION_REF, SESSION_KEY_RESULT, "Start the session over, clean."),
    "meta/session/compact": Signature(SESSION_REF, SESSION_KEY_RESULT, "Compact the session's context."),
    "meta/session/close": Signature(
        SESSION_CLOSE, CLOSED_RESULT, "Close the session; with a retirement cause, queue an exit interview."
    ),
    "meta/session/tool_definitions": Signature(
        TOOL_DEFINITIONS, TOOL_DEFINITIONS_RESULT, "The `memory` tool's definition for an LLM API."
    ),
    "meta/timeline/query": Signature(TIMELINE_QUERY, TIMELINE_RESULT, "Read the persisted timeline."),
    "meta/storage/doctor": Signature(DOCTOR, DOCTOR_RESULT, "Diagnose a state directory's storage."),
    "meta/gating/evaluate": Signature(
        GATING_EVALUATE, GATING_EVALUATE_RESULT, "Ask whether an action may run, or must wait for approval."
    ),
    "meta/gating/decide": Signature(
        GATING_DECIDE, GATING_DECIDE_RESULT, "Approve, reject or escalate a pending action."
    ),
    "meta/gating/pending": Signature(
        GATING_PENDING, GATING_PENDING_RESULT, "The actions waiting for approval."
    ),
    "meta/gating/audit": Signature(
        GATING_AUDIT, GATING_AUDIT_RESULT, "The gating audit trail, newest first."
    ),
    "meta/memory/steward/dream": Signature(DREAM, DREAM_RESULT, "Run the memory steward over a realm now."),
    "meta/memory/quarantine/decide": Signature(
        QUARANTINE_DECIDE,
        QUARANTINE_DECIDE_RESULT,
        "Release or discard a quarantined record, bound to the content hash you reviewed.",
    ),
    "meta/memory/proposals/decide": Signature(
        PROPOSALS_DECIDE,
        PROPOSALS_DECIDE_RESULT,
        "Accept or reject a mob or operator proposal, bound to the content hash you read.",
    ),
    "meta/memory/audit_verdicts/resolve": Signature(
        AUDIT_VERDICT_RESOLVE,
        AUDIT_VERDICT_RESOLVE_RESULT,
        "Acknowledge a usage-audit verdict, or act on a dead_weight one by tombstoning its record.",
    ),
    "meta/memory/panel/records": Signature(
        PANEL_RECORDS, PANEL_RECORDS_RESULT, "Records, newest first, with filters and keyset paging."
    ),
    "meta/memory/panel/record": _panel("One record with its supersede chain and injections.", PANEL_RECORD),
    "meta/memory/panel/quarantine": _panel("The quarantine queue.", listing("Default 50, at most 200.")),
    "meta/memory/panel/dreams": _panel("Recent dream reports.", listing("Default 20, at most 100.")),
    "meta/memory/panel/dream_runs": _panel("Recent dream runs.", listing("Default 20, at most 100.")),
    "meta/memory/panel/audit_verdicts": _panel(
        "The steward's audit verdicts.", listing("Default 50, at most 200.")
    ),
    "meta/memory/panel/overview": _panel("Per-realm counts.", listing(None)),
    "meta/memory/panel/proposals": _panel(
        "Open proposals (pending or held), without bodies.", listing("Default 50, at most 200.")
    ),
    "meta/memory/panel/proposal": Signature(
        PANEL_PROPOSAL, PANEL_PROPOSAL_RESULT, "One proposal with its body and content hash."
    ),
    "meta/memory/panel/injections": _panel("Recent injections.", listing("Default 50, at most 200.")),
    "meta/memory/panel/harvests": _panel(
        "Pending exit-interview harvests.", listing("Default 50, at most 200.")
    ),
}
