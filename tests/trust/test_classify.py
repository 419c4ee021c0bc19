"""The content-trust precedence table of REFERENCE 4.2, row by row and conflict by conflict.

Rules, first hit wins: (0) server-tool content, (1) builtin web names, (2) ``untrusted_tools``,
(3) ``trusted_tools``, (4) typed MCP provenance, (5) qualified ``mcp__<server>__<tool>`` name,
(6) trusted. ``kb`` is the allowlisted MCP server throughout; ``evil`` is not.
"""

from __future__ import annotations

import pytest

from meta_memory.config import ContentTrustConfig
from meta_memory.trust import ALWAYS_UNTRUSTED_TOOLS, ContentTrustPolicy, ToolProvenance, classify

MCP_KB = ToolProvenance("mcp", "kb")
MCP_EVIL = ToolProvenance("mcp", "evil")
BUILTIN_KB = ToolProvenance("builtin", "kb")
CALLBACK = ToolProvenance("callback", None)


def policy(*, untrusted: tuple[str, ...] = (), trusted: tuple[str, ...] = ()) -> ContentTrustPolicy:
    return ContentTrustPolicy(
        trusted_mcp_servers=frozenset({"kb"}),
        untrusted_tools=frozenset(untrusted),
        trusted_tools=frozenset(trusted),
    )


def row(
    case_id: str,
    tool: str,
    expect: tuple[bool, str, str],
    *,
    provenance: ToolProvenance | None = None,
    server_tool: bool = False,
    untrusted: tuple[str, ...] = (),
    trusted: tuple[str, ...] = (),
) -> object:
    return pytest.param(
        policy(untrusted=untrusted, trusted=trusted), tool, provenance, server_tool, expect, id=case_id
    )


UNTRUSTED, TRUSTED = False, True

TABLE = [
    # (0) provider-native server-tool content, alone and against every later rule.
    row("0-server-tool", "web_search", (UNTRUSTED, "server-tool", "server tool web_search"), server_tool=True),
    row("0-beats-3-trusted-tools", "grounding", (UNTRUSTED, "server-tool", "server tool grounding"), server_tool=True, trusted=("grounding",)),
    row("0-beats-2-untrusted-tools", "grounding", (UNTRUSTED, "server-tool", "server tool grounding"), server_tool=True, untrusted=("grounding",)),
    row("0-beats-4-allowlisted-provenance", "lookup", (UNTRUSTED, "server-tool", "server tool lookup"), server_tool=True, provenance=MCP_KB),
    row("0-beats-5-allowlisted-name", "mcp__kb__lookup", (UNTRUSTED, "server-tool", "server tool mcp__kb__lookup"), server_tool=True),
    row("0-beats-6-default", "code_execution", (UNTRUSTED, "server-tool", "server tool code_execution"), server_tool=True),
    # (1) builtin names: every one, and nothing overrides them.
    *[row(f"1-builtin-{name}", name, (UNTRUSTED, "builtin-untrusted", f"tool {name}")) for name in sorted(ALWAYS_UNTRUSTED_TOOLS)],
    *[row(f"1-beats-3-trusted-tools-{name}", name, (UNTRUSTED, "builtin-untrusted", f"tool {name}"), trusted=(name,)) for name in sorted(ALWAYS_UNTRUSTED_TOOLS)],
    row("1-before-2-untrusted-tools", "web_fetch", (UNTRUSTED, "builtin-untrusted", "tool web_fetch"), untrusted=("web_fetch",)),
    row("1-beats-4-allowlisted-provenance", "fetch", (UNTRUSTED, "builtin-untrusted", "tool fetch"), provenance=MCP_KB),
    row("1-beats-4-and-3-together", "fetch", (UNTRUSTED, "builtin-untrusted", "tool fetch"), provenance=MCP_KB, trusted=("fetch",)),
    row("1-with-non-mcp-provenance", "http_request", (UNTRUSTED, "builtin-untrusted", "tool http_request"), provenance=BUILTIN_KB),
    # Exact, case-sensitive names: look-alikes are different tools.
    row("1-case-sensitive", "Web_Fetch", (TRUSTED, "default-trusted", "tool Web_Fetch")),
    row("1-no-trimming", "web_fetch ", (TRUSTED, "default-trusted", "tool web_fetch ")),
    row("1-no-prefix-match", "web_fetch_cached", (TRUSTED, "default-trusted", "tool web_fetch_cached")),
    # (2) untrusted_tools.
    row("2-untrusted-tools", "scrape_page", (UNTRUSTED, "untrusted-tools", "tool scrape_page"), untrusted=("scrape_page",)),
    row("2-beats-3-listed-in-both", "scrape_page", (UNTRUSTED, "untrusted-tools", "tool scrape_page"), untrusted=("scrape_page",), trusted=("scrape_page",)),
    row("2-beats-4-allowlisted-provenance", "lookup", (UNTRUSTED, "untrusted-tools", "tool lookup"), provenance=MCP_KB, untrusted=("lookup",)),
    row("2-beats-5-allowlisted-name", "mcp__kb__scrape", (UNTRUSTED, "untrusted-tools", "tool mcp__kb__scrape"), untrusted=("mcp__kb__scrape",)),
    row("2-case-sensitive", "Scrape_Page", (TRUSTED, "default-trusted", "tool Scrape_Page"), untrusted=("scrape_page",)),
    row("2-covers-malformed-name", "mcp__a", (UNTRUSTED, "untrusted-tools", "tool mcp__a"), untrusted=("mcp__a",)),
    # (3) trusted_tools, which beat the server rules.
    row("3-trusted-tools", "internal_db", (TRUSTED, "trusted-tools", "tool internal_db"), trusted=("internal_db",)),
    row("3-beats-4-off-allowlist-provenance", "read", (TRUSTED, "trusted-tools", "tool read"), provenance=MCP_EVIL, trusted=("read",)),
    row("3-beats-4-provenance-without-server", "read", (TRUSTED, "trusted-tools", "tool read"), provenance=ToolProvenance("mcp", None), trusted=("read",)),
    row("3-beats-5-off-allowlist-name", "mcp__evil__read", (TRUSTED, "trusted-tools", "tool mcp__evil__read"), trusted=("mcp__evil__read",)),
    row("3-beats-malformed-name", "mcp____x", (TRUSTED, "trusted-tools", "tool mcp____x"), trusted=("mcp____x",)),
    # (4) typed MCP provenance: source_id is the server, even for unqualified names.
    row("4-unqualified-allowlisted", "search_docs", (TRUSTED, "mcp-provenance", "mcp server kb"), provenance=MCP_KB),
    row("4-unqualified-off-allowlist", "search_docs", (UNTRUSTED, "mcp-provenance", "mcp server evil"), provenance=MCP_EVIL),
    row("4-beats-5-name-says-allowlisted", "mcp__kb__read", (UNTRUSTED, "mcp-provenance", "mcp server evil"), provenance=MCP_EVIL),
    row("4-beats-5-name-says-off-allowlist", "mcp__evil__read", (TRUSTED, "mcp-provenance", "mcp server kb"), provenance=MCP_KB),
    row("4-beats-malformed-name", "mcp__a", (TRUSTED, "mcp-provenance", "mcp server kb"), provenance=MCP_KB),
    row("4-server-unknown", "search_docs", (UNTRUSTED, "mcp-provenance", "mcp tool search_docs (server unknown)"), provenance=ToolProvenance("mcp", None)),
    row("4-server-empty", "search_docs", (UNTRUSTED, "mcp-provenance", "mcp tool search_docs (server unknown)"), provenance=ToolProvenance("mcp", "")),
    row("4-server-case-sensitive", "search_docs", (UNTRUSTED, "mcp-provenance", "mcp server KB"), provenance=ToolProvenance("mcp", "KB")),
    # (5) qualified-name fallback, when provenance is absent or non-MCP.
    row("5-qualified-allowlisted", "mcp__kb__read", (TRUSTED, "mcp-qualified-name", "mcp server kb")),
    row("5-qualified-off-allowlist", "mcp__evil__read", (UNTRUSTED, "mcp-qualified-name", "mcp server evil")),
    row("5-non-mcp-provenance-falls-back-trusted", "mcp__kb__read", (TRUSTED, "mcp-qualified-name", "mcp server kb"), provenance=CALLBACK),
    row("5-non-mcp-source-id-is-not-a-server", "mcp__evil__read", (UNTRUSTED, "mcp-qualified-name", "mcp server evil"), provenance=BUILTIN_KB),
    row("5-tool-part-may-contain-separator", "mcp__kb__read__deep", (TRUSTED, "mcp-qualified-name", "mcp server kb")),
    row("5-server-is-first-segment", "mcp__evil__kb__read", (UNTRUSTED, "mcp-qualified-name", "mcp server evil")),
    # Odd names: prefixed but unattributable -> untrusted, never trusted.
    row("5-odd-bare-prefix", "mcp__", (UNTRUSTED, "mcp-malformed-name", "malformed mcp tool name mcp__")),
    row("5-odd-no-tool-part", "mcp__kb", (UNTRUSTED, "mcp-malformed-name", "malformed mcp tool name mcp__kb")),
    row("5-odd-no-tool-part-other-server", "mcp__a", (UNTRUSTED, "mcp-malformed-name", "malformed mcp tool name mcp__a")),
    row("5-odd-empty-server", "mcp____x", (UNTRUSTED, "mcp-malformed-name", "malformed mcp tool name mcp____x")),
    row("5-odd-empty-tool", "mcp__kb__", (UNTRUSTED, "mcp-malformed-name", "malformed mcp tool name mcp__kb__")),
    row("5-odd-non-mcp-provenance", "mcp__kb", (UNTRUSTED, "mcp-malformed-name", "malformed mcp tool name mcp__kb"), provenance=CALLBACK),
    row("5-prefix-case-sensitive", "MCP__evil__read", (TRUSTED, "default-trusted", "tool MCP__evil__read")),
    row("5-single-underscore-is-not-qualified", "mcp_evil_read", (TRUSTED, "default-trusted", "tool mcp_evil_read")),
    # (6) everything else.
    row("6-default", "read_file", (TRUSTED, "default-trusted", "tool read_file")),
    row("6-default-non-mcp-provenance", "read_file", (TRUSTED, "default-trusted", "tool read_file"), provenance=CALLBACK),
    row("6-mcp-kind-is-case-sensitive", "read_file", (TRUSTED, "default-trusted", "tool read_file"), provenance=ToolProvenance("MCP", "evil")),
]  # fmt: skip


@pytest.mark.parametrize(("policy_", "tool", "provenance", "server_tool", "expect"), TABLE)
def test_classification_follows_the_reference_precedence_table(
    policy_: ContentTrustPolicy,
    tool: str,
    provenance: ToolProvenance | None,
    server_tool: bool,
    expect: tuple[bool, str, str],
) -> None:
    verdict = classify(policy_, tool, provenance, server_tool=server_tool)
    assert (verdict.trusted, verdict.rule, verdict.source) == expect


@pytest.mark.parametrize("name", sorted(ALWAYS_UNTRUSTED_TOOLS))
def test_no_policy_at_all_can_make_a_builtin_web_tool_trusted(name: str) -> None:
    everything = ContentTrustPolicy(
        trusted_mcp_servers=frozenset({name, "kb"}),
        untrusted_tools=frozenset(),
        trusted_tools=frozenset({name}),
    )
    for provenance in (None, MCP_KB, ToolProvenance("mcp", name), CALLBACK):
        assert classify(everything, name, provenance).trusted is False


def test_an_empty_policy_trusts_plain_tools_and_distrusts_every_mcp_server() -> None:
    empty = ContentTrustPolicy()
    assert classify(empty, "read_file").trusted is True
    assert classify(empty, "mcp__kb__read").trusted is False
    assert classify(empty, "search_docs", MCP_KB).trusted is False


def test_policy_from_config_reads_the_three_lists_of_the_content_trust_section() -> None:
    cfg = ContentTrustConfig.model_validate(
        {
            "trusted_mcp_servers": ["knowledge_graph"],
            "untrusted_tools": ["scrape_page"],
            "trusted_tools": ["calc"],
        }
    )
    built = ContentTrustPolicy.from_config(cfg)
    assert built == ContentTrustPolicy(
        trusted_mcp_servers=frozenset({"knowledge_graph"}),
        untrusted_tools=frozenset({"scrape_page"}),
        trusted_tools=frozenset({"calc"}),
    )
    assert classify(built, "mcp__knowledge_graph__query").trusted is True
    assert classify(built, "scrape_page").trusted is False


def test_policy_refuses_a_bare_string_where_a_set_of_names_belongs() -> None:
    with pytest.raises(TypeError, match="untrusted_tools"):
        ContentTrustPolicy(untrusted_tools="scrape_page")  # type: ignore[arg-type]


def test_policy_accepts_any_iterable_of_names_and_stores_a_frozenset() -> None:
    built = ContentTrustPolicy(trusted_mcp_servers=["kb"])  # type: ignore[arg-type]
    assert built.trusted_mcp_servers == frozenset({"kb"})
    assert classify(built, "mcp__kb__read").trusted is True
