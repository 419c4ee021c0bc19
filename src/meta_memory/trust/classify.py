"""Content-trust classification: decides whether one tool result is trusted content for memory purposes.

This module owns the content-trust policy (``agent_memory.content_trust``) and the one precedence
table of REFERENCE 4.2 / seed 000, first hit wins: (0) provider-native server-tool content is always
untrusted; (1) the builtin web names ``web_search``, ``web_fetch``, ``fetch``, ``http_request`` are
always untrusted and nothing overrides them; (2) ``untrusted_tools``; (3) ``trusted_tools``; (4) typed
MCP provenance, whose ``source_id`` names the server even when the tool name is unqualified, trusted iff
the server is allowlisted; (5) without MCP provenance, a qualified ``mcp__<server>__<tool>`` name,
trusted iff the server is allowlisted; (6) anything else is trusted. Every name comparison is an exact,
case-sensitive string match, as upstream: ``Web_Fetch`` is a different tool from ``web_fetch``, and no
whitespace is trimmed here (the config loader trims its lists). A name that starts with ``mcp__`` but
does not split into a non-empty server and a non-empty tool (``mcp__``, ``mcp__a``, ``mcp____x``,
``mcp__a__``) cannot be attributed to any server and is classified untrusted, never trusted.
"""

from __future__ import annotations

from collections.abc import Collection, Iterable
from dataclasses import dataclass, field
from typing import Protocol

__all__ = [
    "ALWAYS_UNTRUSTED_TOOLS",
    "MCP_QUALIFIED_PREFIX",
    "Classification",
    "ContentTrustPolicy",
    "ToolProvenance",
    "classify",
]

ALWAYS_UNTRUSTED_TOOLS: frozenset[str] = frozenset({"web_search", "web_fetch", "fetch", "http_request"})
"""Builtin web-facing tool names: untrusted whatever the policy says."""

MCP_QUALIFIED_PREFIX = "mcp__"
"""The prefix of a server-qualified MCP tool name, ``mcp__<server>__<tool>``."""

_MCP_KIND = "mcp"
_SEPARATOR = "__"


class _ContentTrustSettings(Protocol):
    """Anything shaped like :class:`meta_memory.config.ContentTrustConfig`."""

    @property
    def trusted_mcp_servers(self) -> Collection[str]: ...

    @property
    def untrusted_tools(self) -> Collection[str]: ...

    @property
    def trusted_tools(self) -> Collection[str]: ...


def _names(value: Iterable[str], what: str) -> frozenset[str]:
    # A bare string would silently turn membership into a substring test.
    if isinstance(value, str):
        raise TypeError(f"{what} must be a collection of names, not a string")
    return frozenset(value)


@dataclass(frozen=True)
class ContentTrustPolicy:
    """The allowlists and overrides one classification reads. Sets of exact, case-sensitive names."""

    trusted_mcp_servers: frozenset[str] = field(default_factory=frozenset)
    untrusted_tools: frozenset[str] = field(default_factory=frozenset)
    trusted_tools: frozenset[str] = field(default_factory=frozenset)

    def __post_init__(self) -> None:
        for name in ("trusted_mcp_servers", "untrusted_tools", "trusted_tools"):
            object.__setattr__(self, name, _names(getattr(self, name), name))

    @classmethod
    def from_config(cls, cfg: _ContentTrustSettings) -> ContentTrustPolicy:
        """Build the policy from a ``ContentTrustConfig`` (or anything with its three name lists)."""
        return cls(
            trusted_mcp_servers=frozenset(cfg.trusted_mcp_servers),
            untrusted_tools=frozenset(cfg.untrusted_tools),
            trusted_tools=frozenset(cfg.trusted_tools),
        )


@dataclass(frozen=True)
class ToolProvenance:
    """Where a tool came from, as the request's tool catalogue says. ``kind == "mcp"`` is typed MCP
    provenance and ``source_id`` is then the MCP server name; any other kind is non-MCP."""

    kind: str
    source_id: str | None = None

    @property
    def is_mcp(self) -> bool:
        return self.kind == _MCP_KIND


@dataclass(frozen=True)
class Classification:
    """One verdict. ``source`` is a short human label of the content's origin (the text quarantine
    reasons quote, e.g. ``tool web_fetch`` or ``mcp server evil``); ``rule`` is the stable kebab-case
    id of the precedence rule that decided."""

    trusted: bool
    source: str
    rule: str


def _qualified_server(tool_name: str) -> str | None:
    """The server of a well-formed ``mcp__<server>__<tool>`` name, else ``None``."""
    server, separator, tool = tool_name.removeprefix(MCP_QUALIFIED_PREFIX).partition(_SEPARATOR)
    if not server or not separator or not tool:
        return None
    return server


def classify(
    policy: ContentTrustPolicy,
    tool_name: str,
    provenance: ToolProvenance | None = None,
    *,
    server_tool: bool = False,
) -> Classification:
    """Classify one tool result (or error) with the exact precedence of REFERENCE 4.2.

    Args:
        policy: the configured allowlists and overrides.
        tool_name: the tool's name exactly as the model called it.
        provenance: the tool catalogue's provenance for it, when the host knows it.
        server_tool: the content is a provider-native server-tool block (always untrusted).

    Returns:
        The verdict, with the origin label and the id of the deciding rule.
    """
    if server_tool:
        return Classification(False, f"server tool {tool_name}", "server-tool")
    if tool_name in ALWAYS_UNTRUSTED_TOOLS:
        return Classification(False, f"tool {tool_name}", "builtin-untrusted")
    if tool_name in policy.untrusted_tools:
        return Classification(False, f"tool {tool_name}", "untrusted-tools")
    if tool_name in policy.trusted_tools:
        return Classification(True, f"tool {tool_name}", "trusted-tools")
    if provenance is not None and provenance.is_mcp:
        server = provenance.source_id
        if not server:
            return Classification(False, f"mcp tool {tool_name} (server unknown)", "mcp-provenance")
        return Classification(server in policy.trusted_mcp_servers, f"mcp server {server}", "mcp-provenance")
    if tool_name.startswith(MCP_QUALIFIED_PREFIX):
        server = _qualified_server(tool_name)
        if server is None:
            return Classification(False, f"malformed mcp tool name {tool_name}", "mcp-malformed-name")
        return Classification(
            server in policy.trusted_mcp_servers, f"mcp server {server}", "mcp-qualified-name"
        )
    return Classification(True, f"tool {tool_name}", "default-trusted")
