"""The memory firewall's decision core: content-trust classification of tool results, session-sticky
taint, and the write gate that quarantines LLM-authored writes. ``classify`` holds the precedence table
(REFERENCE 4.2), ``taint`` the transitions of the per-session facts the realm store keeps (4.3), ``gate`` the write
posture and the quarantine event (4.4). Nothing here stores records or speaks JSON-RPC.
"""

from __future__ import annotations

from .classify import (
    ALWAYS_UNTRUSTED_TOOLS,
    MCP_QUALIFIED_PREFIX,
    Classification,
    ContentTrustPolicy,
    ToolProvenance,
    classify,
)
from .gate import (
    LLM_WRITES_POSTURES,
    QUARANTINED_POLICY_REASON,
    WRITE_QUARANTINED_EVENT,
    WriteGate,
    emit_quarantined,
)
from .taint import TAINT_TRANSITION_EVENT, SessionTaint, TaintChange

__all__ = [
    "ALWAYS_UNTRUSTED_TOOLS",
    "LLM_WRITES_POSTURES",
    "MCP_QUALIFIED_PREFIX",
    "QUARANTINED_POLICY_REASON",
    "TAINT_TRANSITION_EVENT",
    "WRITE_QUARANTINED_EVENT",
    "Classification",
    "ContentTrustPolicy",
    "SessionTaint",
    "TaintChange",
    "ToolProvenance",
    "WriteGate",
    "classify",
    "emit_quarantined",
]
