"""The one rooted exception tree of meta_memory.

Every error that can reach a caller derives from :class:`MetaError`. Errors that cross
the JSON-RPC wire carry their code and optional ``data``; exactly one function
(:func:`meta_memory.gateway.dispatch.to_wire_error`) turns them into wire errors.

::

    MetaError                          code    meaning
    ├── ProtocolError                          JSON-RPC envelope problems
    │   ├── ParseError                 -32700  not JSON
    │   ├── InvalidRequest             -32600  JSON, but not a request
    │   └── MethodNotFound             -32601  no such method (or surface)
    ├── InvalidParams                  -32602  a parameter broke a rule; message names it
    │   ├── ConfigError                -32602  configuration refused at load (CLI exit 2)
    │   ├── WriteRefused               -32602  the store validator refused a memory write
    │   ├── SessionRefused             -32602  a session key names no session the caller may drive
    │   ├── AuditVerdictRefused        -32602  a usage-audit verdict's resolution was refused
    │   └── GatingDecisionRefused      -32602  a gating decision was refused (meta_memory.gating)
    ├── InternalError                  -32603  a bug or an unexpected I/O fault
    ├── UnknownRecord                  -32001  panel record lookup miss
    ├── CapabilityUnavailable          -32004  feature not configured / not supported
    ├── ReadOnly                       -32010  read-only console
    ├── MemoryBackendUnavailable       -32012  ledger persist / health check failed
    ├── StorageRefused                 -32014  fail-closed storage refusal (at boot, or of one store)
    │   ├── StoreCorrupt               -32014  a store file that exists but cannot be served
    │   └── StoreUnavailable           -32014  the database behind the realm stores failed a call
    ├── AccessDenied                   -32030  access control said no
    ├── QuarantineReviewRefused        -32043  a quarantine decision was refused
    └── ProposalReviewRefused          -32043  an operator's decision on a proposal was refused
"""

from __future__ import annotations

from typing import Any

__all__ = [
    "AccessDenied",
    "AuditVerdictRefused",
    "CapabilityUnavailable",
    "ConfigError",
    "InternalError",
    "InvalidParams",
    "InvalidRequest",
    "MemoryBackendUnavailable",
    "MetaError",
    "MethodNotFound",
    "ParseError",
    "ProposalReviewRefused",
    "ProtocolError",
    "PurgeIncomplete",
    "QuarantineReviewRefused",
    "ReadOnly",
    "SessionRefused",
    "StorageRefused",
    "StoreCorrupt",
    "StoreUnavailable",
    "UnknownRecord",
    "WriteRefused",
    "error_from_wire",
]


class MetaError(Exception):
    """Root of every meta_memory error. ``code`` is the JSON-RPC error code."""

    code: int = -32603

    def __init__(self, message: str, *, data: dict[str, Any] | None = None) -> None:
        super().__init__(message)
        self.message = message
        self.data = data

    def __repr__(self) -> str:
        return f"{type(self).__name__}({self.message!r})"


class ProtocolError(MetaError):
    """The JSON-RPC envelope itself was wrong."""


class ParseError(ProtocolError):
    """The request was not JSON (-32700)."""

    code = -32700

    def __init__(self, message: str = "Parse error") -> None:
        super().__init__(message)


class InvalidRequest(ProtocolError):
    """The JSON was no JSON-RPC 2.0 request: a batch, no method, a bad id, or over the size cap (-32600)."""

    code = -32600

    def __init__(self, message: str = "Invalid Request") -> None:
        super().__init__(message)


class MethodNotFound(ProtocolError):
    """No such method on the surface the call arrived on (-32601)."""

    code = -32601

    def __init__(self, message: str = "Method not found", *, data: dict[str, Any] | None = None) -> None:
        super().__init__(message, data=data)


class InvalidParams(MetaError):
    """A parameter broke a rule. The message names the parameter."""

    code = -32602


class ConfigError(InvalidParams, ValueError):
    """Configuration refused at load; the message names the key or value.

    Also a ``ValueError``, so builder callers can treat a bad option as one."""


class WriteRefused(InvalidParams):
    """The one store validator refused a write; ``rule`` names the rule (stable kebab-case)."""

    def __init__(self, rule: str, message: str) -> None:
        super().__init__(message, data={"kind": "memory_write_refused", "rule": rule})
        self.rule = rule


class SessionRefused(InvalidParams):
    """A session key names no session the caller may drive (-32602). ``reason``: ``unknown`` (never
    opened, or another caller's: the two are not told apart), ``closed``, ``reset`` (use the key the
    reset returned) or ``expired`` (idle past ``agent_memory.session_idle_timeout_s``). Open a new
    session; an expired session's taint passes to it."""

    def __init__(self, reason: str, message: str) -> None:
        super().__init__(message, data={"kind": "session_refused", "reason": reason})
        self.reason = reason


class AuditVerdictRefused(InvalidParams):
    """A well-formed ``meta/memory/audit_verdicts/resolve`` that cannot be applied; nothing
    changed. ``reason``: ``unknown_verdict``, ``already_resolved`` (another action resolved it),
    ``content_mismatch`` (the record changed since it was read), ``not_dead_weight`` (only a
    ``dead_weight`` verdict is acted on by a tombstone), ``not_active`` (the record is no longer
    active memory)."""

    def __init__(self, reason: str, message: str, **extra: Any) -> None:
        super().__init__(message, data={"kind": "audit_verdict_refused", "reason": reason, **extra})
        self.reason = reason


class InternalError(MetaError):
    """Something failed inside the runtime (-32603); the detail is in the log, never on the wire."""

    code = -32603


class UnknownRecord(MetaError):
    """No record with that id in the caller's scope (-32001)."""

    code = -32001


class CapabilityUnavailable(MetaError):
    """What the call needs is not configured or installed here (-32004), e.g. agent memory off."""

    code = -32004


class ReadOnly(MetaError):
    """A write on a console configured ``read_only`` (-32010)."""

    code = -32010

    def __init__(self, message: str = "console is read-only") -> None:
        super().__init__(message, data={"kind": "read_only"})


class MemoryBackendUnavailable(MetaError):
    """The assertion ledger could not persist (or its health check failed)."""

    code = -32012

    def __init__(self, detail: str) -> None:
        super().__init__(f"Memory backend unavailable: {detail}")
        self.detail = detail


class StorageRefused(MetaError):
    """Fail-closed refusal to serve storage: a state directory at boot, or one store."""

    code = -32014


class StoreCorrupt(StorageRefused):
    """A store file exists but cannot be served (damaged, unreadable, or from a newer release).

    The message names the file relative to the state dir; the file is left as it was.
    """


class StoreUnavailable(StorageRefused):
    """The database behind the realm stores could not serve a call (a lost connection, a server
    that is down): a write was not applied; retry when the server is back."""

    def __init__(self, message: str) -> None:
        super().__init__(message, data={"kind": "store_unavailable"})


class PurgeIncomplete(StorageRefused):
    """A purge deleted its rows but could not yet rewrite every file that held them (a reader
    held one too long): the rewrite is owed, and the upkeep or the next purge of the realm does it."""

    def __init__(self, receipt_id: str) -> None:
        super().__init__(
            "the purge deleted its records but could not yet rewrite every file of the realm "
            "(a reader held one); the upkeep finishes it within a minute",
            data={"kind": "purge_incomplete", "receipt_id": receipt_id},
        )


class AccessDenied(MetaError):
    """The access rules do not let the caller take ``action`` on ``resource`` (-32030)."""

    code = -32030

    def __init__(self, action: str, resource: str | None = None, *, message: str | None = None) -> None:
        super().__init__(
            message or f"access denied: {action}",
            data={"kind": "access_denied", "action": action, "resource": resource},
        )


class QuarantineReviewRefused(MetaError):
    """A quarantine decision refused (-32043); ``reason`` says why: ``content_mismatch`` (the
    record changed since it was reviewed), ``not_quarantined``, ``gate_pending``,
    ``successor_conflict``."""

    code = -32043

    def __init__(self, reason: str, message: str, **extra: Any) -> None:
        super().__init__(
            message,
            data={"kind": "memory_quarantine_review_refused", "reason": reason, **extra},
        )
        self.reason = reason


class ProposalReviewRefused(MetaError):
    """An operator's decision on a proposal refused (-32043, a ``data.kind`` of its own); nothing
    was written. ``reason``: ``content_mismatch`` (the proposal is not what was read),
    ``already_decided`` (the steward decided it, or an operator gave the other verdict),
    ``gate_pending`` (an accept while a gated promotion of it waits), ``operator_scope_off`` (an
    accept into operator scope while ``operator_scope`` is off), ``unsupported_scope``."""

    code = -32043

    def __init__(self, reason: str, message: str, **extra: Any) -> None:
        super().__init__(message, data={"kind": "memory_proposal_review_refused", "reason": reason, **extra})
        self.reason = reason


# -- the way back: a wire error as the exception it was ------------------------------------------

_BY_KIND: dict[str, type[MetaError]] = {
    "memory_write_refused": WriteRefused,
    "session_refused": SessionRefused,
    "audit_verdict_refused": AuditVerdictRefused,
    "memory_quarantine_review_refused": QuarantineReviewRefused,
    "memory_proposal_review_refused": ProposalReviewRefused,
    "access_denied": AccessDenied,
    "read_only": ReadOnly,
    "store_unavailable": StoreUnavailable,
    "purge_incomplete": PurgeIncomplete,
}
_BY_CODE: dict[int, type[MetaError]] = {
    cls.code: cls
    for cls in (
        ParseError,
        InvalidRequest,
        MethodNotFound,
        InvalidParams,
        InternalError,
        UnknownRecord,
        CapabilityUnavailable,
        ReadOnly,
        MemoryBackendUnavailable,
        StorageRefused,
        AccessDenied,
        QuarantineReviewRefused,
    )
}


def error_from_wire(error: Any) -> MetaError:
    """The exception a JSON-RPC error object stands for (what a client raises): the class its
    ``code`` (and ``data.kind``) names, carrying the wire ``message`` and ``data``."""
    if not isinstance(error, dict):
        error = {}
    code = error.get("code")
    message = error.get("message")
    data = error.get("data")
    data = data if isinstance(data, dict) else None
    cls: type[MetaError] = MetaError
    kind = data.get("kind") if data is not None else None
    if isinstance(kind, str) and kind in _BY_KIND and _BY_KIND[kind].code == code:
        cls = _BY_KIND[kind]
    elif isinstance(code, int) and code in _BY_CODE:
        cls = _BY_CODE[code]
    exc = cls.__new__(cls)
    MetaError.__init__(exc, message if isinstance(message, str) else "error without a message", data=data)
    if cls is MetaError and isinstance(code, int):
        exc.code = code
    if isinstance(exc, WriteRefused) and data is not None:
        exc.rule = str(data.get("rule", ""))
    reasoned = SessionRefused | QuarantineReviewRefused | AuditVerdictRefused | ProposalReviewRefused
    if isinstance(exc, reasoned) and data is not None:
        exc.reason = str(data.get("reason", ""))
    if isinstance(exc, MemoryBackendUnavailable):
        exc.detail = exc.message.removeprefix("Memory backend unavailable: ")
    return exc
