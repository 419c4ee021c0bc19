"""``meta_gateway review``: the quarantine queue and the open proposals outside the console.

Against a running gateway (``--gateway URL`` with a console token) or directly on a state dir no
runtime holds (``--state-dir``), the same calls the console makes: the queue (or the proposals),
one record (or proposal) in full, and the decision, bound to the content hash of the version
reviewed. A decision therefore gets the console's refusals (a changed record, one already
decided), its access rules and its audit trail; the reviewer recorded is the console token's
subject, or ``local:<user>`` on a state dir.
"""

from __future__ import annotations

import contextlib
import getpass
import json
import re
import sys
from collections.abc import Iterator
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import click

from .errors import MetaError

__all__ = ["review"]

EXIT_REFUSED = 2


def _gateway_options(command: Any) -> Any:
    options = [
        click.option(
            "--gateway",
            "gateway_url",
            metavar="URL",
            default=None,
            envvar="META_GATEWAY_URL",
            show_envvar=True,
            help="A running `meta_gateway serve` to review through (its console surface).",
        ),
        click.option(
            "--console-token",
            default=None,
            envvar="META_CONSOLE_TOKEN",
            show_envvar=True,
            help="With --gateway: a [[console.auth.tokens]] bearer token (prefer the environment variable).",
        ),
        click.option(
            "--state-dir",
            type=click.Path(file_okay=False, path_type=Path),
            default=None,
            envvar="META_STATE_DIR",
            show_envvar=True,
            help="Review directly on this state dir (no runtime may hold it).",
        ),
        click.option(
            "--config",
            "config_path",
            type=click.Path(dir_okay=False, path_type=Path),
            default=None,
            envvar="META_CONFIG",
            show_envvar=True,
            help="With --state-dir: the config file (its [agent_memory] store and realm).",
        ),
        click.option("--json", "as_json", is_flag=True, help="Print the result as JSON."),
    ]
    for option in reversed(options):
        command = option(command)
    return command


@contextlib.contextmanager
def _console(
    gateway_url: str | None, console_token: str | None, state_dir: Path | None, config_path: Path | None
) -> Iterator[Any]:
    """The console surface of the gateway, or of a runtime booted on the state dir."""
    from .cli import settle_environment

    state_dir, gateway_url, config_path = settle_environment(state_dir, gateway_url, config_path)
    if (gateway_url is None) == (state_dir is None):
        raise click.UsageError("give exactly one of --gateway URL and --state-dir DIR")
    try:
        if gateway_url is not None:
            if config_path is not None:
                raise click.UsageError("--config goes with --state-dir; a gateway has its own")
            from .client import MetaClient

            with MetaClient.connect(gateway_url, console_token=console_token) as client:
                yield client.console
            return
        assert state_dir is not None
        from .cli import _boot
        from .sdk import MetaHandle

        with MetaHandle(_boot(state_dir, config_path)) as handle:
            yield handle.console_as(f"local:{getpass.getuser()}")
    except MetaError as exc:
        click.echo(f"meta_gateway: {exc.message}", err=True)
        sys.exit(EXIT_REFUSED)


# The wire's parameter names, as the user typed them on this command line.
_FLAGS = {
    "expected_content_hash": "--hash",
    "rationale": "--rationale",
    "realm": "--realm",
    "memory_id": "MEMORY_ID",
    "proposal_id": "PROPOSAL_ID",
}


def _as_typed(message: str) -> str:
    """A refusal's message with each parameter it names replaced by the flag behind it."""
    pattern = re.compile(r"\b(" + "|".join(map(re.escape, _FLAGS)) + r")\b")
    return pattern.sub(lambda m: _FLAGS[m.group(1)], message)


def _when(ms: int) -> str:
    return datetime.fromtimestamp(ms / 1000, UTC).strftime("%Y-%m-%d %H:%M:%S UTC")


def _shown(text: str) -> str:
    """Record text for a terminal: control characters (escape sequences) made visible."""
    return "".join(c if c in "\n\t" or (ord(c) >= 32 and ord(c) != 127) else f"\\x{ord(c):02x}" for c in text)


def _print_json(value: Any) -> None:
    click.echo(json.dumps(value, ensure_ascii=False, indent=2, sort_keys=True))


@click.group()
def review() -> None:
    """Review the quarantine (list, show, release, discard) and proposals (proposals, proposal,
    accept, reject)."""


@review.command("list")
@_gateway_options
@click.option("--realm", default=None, help="One realm (default: every realm).")
@click.option("--limit", default=50, show_default=True, type=click.IntRange(1, 200))
def review_list(
    gateway_url: str | None,
    console_token: str | None,
    state_dir: Path | None,
    config_path: Path | None,
    as_json: bool,
    realm: str | None,
    limit: int,
) -> None:
    """The quarantined records, newest first."""
    with _console(gateway_url, console_token, state_dir, config_path) as console:
        params: dict[str, Any] = {"limit": limit}
        if realm is not None:
            params["realm"] = realm
        queue = console.call("meta/memory/panel/quarantine", params)
    rows = queue["records"]
    if as_json:
        _print_json(rows)
        return
    if not rows:
        click.echo("The quarantine is empty.")
        return
    from rich.console import Console

    table = _listing(
        f"Quarantined records ({len(rows)})",
        "memory_id",
        [row["memory_id"] for row in rows],
        ("realm", "identity", "title", "reason", "written"),
    )
    for row in rows:
        table.add_row(
            row["memory_id"],
            row["realm"],
            str(row.get("scope_key") or ""),
            _shown(row["title"]),
            str(row.get("quarantine_reason") or ""),
            _when(row["created_at_ms"]),
        )
    Console(highlight=False).print(table)
    click.echo("Show one with `meta_gateway review show MEMORY_ID ...` before deciding it.")


def _listing(title: str, id_column: str, ids: list[str], columns: tuple[str, ...]) -> Any:
    """A table whose first column holds ids whole (the value the next command needs), at any
    terminal width: the other columns share what is left and fold."""
    from rich.console import Console
    from rich.table import Table

    widest = max(len(i) for i in ids)
    left = Console().width - widest - 3 * (len(columns) + 1) - 1
    table = Table(title=title)
    table.add_column(id_column, no_wrap=True, min_width=widest)
    for column in columns:
        table.add_column(column, overflow="fold", max_width=max(4, left // len(columns)))
    return table


def _detail(console: Any, memory_id: str, realm: str | None) -> dict[str, Any]:
    params: dict[str, Any] = {"memory_id": memory_id}
    if realm is not None:
        params["realm"] = realm
    detail: dict[str, Any] = console.call("meta/memory/panel/record", params)
    return detail


@review.command("show")
@_gateway_options
@click.argument("memory_id")
@click.option("--realm", default=None, help="The record's realm (default: the first holding the id).")
def review_show(
    gateway_url: str | None,
    console_token: str | None,
    state_dir: Path | None,
    config_path: Path | None,
    as_json: bool,
    memory_id: str,
    realm: str | None,
) -> None:
    """One record in full, with the content hash a decision is bound to."""
    with _console(gateway_url, console_token, state_dir, config_path) as console:
        detail = _detail(console, memory_id, realm)
    record = detail["record"]
    if as_json:
        _print_json(detail)
        return
    status = record["status"]
    lines = [
        f"memory_id     {record['id']}",
        f"realm         {detail['realm']}",
        f"scope         {json.dumps(record['scope'], ensure_ascii=False)}",
        f"status        {status['status']}" + (f" ({status['reason']})" if status.get("reason") else ""),
        f"author        {json.dumps(record['provenance'].get('author'), ensure_ascii=False)}",
        f"trust         {record['trust']}",
        f"tags          {', '.join(record['tags']) or '-'}",
        f"written       {_when(record['created_at_ms'])}",
        f"content_hash  {record['content_hash']}",
        "",
        f"title: {_shown(record['title'])}",
        "",
        _shown(record["body"]),
    ]
    click.echo("\n".join(lines))
    if status["status"] == "quarantined":
        click.echo(
            f"\nDecide it: meta_gateway review release|discard {record['id']} --hash {record['content_hash']}"
        )


def _decide(verdict: str) -> Any:
    @_gateway_options
    @click.argument("memory_id")
    @click.option(
        "--hash",
        "expected_hash",
        required=True,
        help="The content_hash `review show` printed: the decision applies only to that version.",
    )
    @click.option("--realm", default=None, help="The record's realm (default: the first holding the id).")
    @click.option("--rationale", default=None, help="Why (kept in the audit trail).")
    def decide(
        gateway_url: str | None,
        console_token: str | None,
        state_dir: Path | None,
        config_path: Path | None,
        as_json: bool,
        memory_id: str,
        expected_hash: str,
        realm: str | None,
        rationale: str | None,
    ) -> None:
        with _console(gateway_url, console_token, state_dir, config_path) as console:
            detail = _detail(console, memory_id, realm)
            scope = detail["record"]["scope"]
            identity = scope.get("identity")
            if not isinstance(identity, str):
                click.echo(
                    f"meta_gateway: {memory_id} is a {scope.get('scope')}-scoped record: the quarantine "
                    "review decides identity-scoped records",
                    err=True,
                )
                sys.exit(EXIT_REFUSED)
            params: dict[str, Any] = {
                "identity": identity,
                "realm": detail["realm"],
                "memory_id": memory_id,
                "verdict": verdict,
                "expected_content_hash": expected_hash,
            }
            if rationale is not None:
                params["rationale"] = rationale
            try:
                answer = console.call("meta/memory/quarantine/decide", params)
            except MetaError as exc:
                click.echo(f"meta_gateway: {_as_typed(exc.message)}", err=True)
                sys.exit(EXIT_REFUSED)
        if as_json:
            _print_json(answer)
            return
        successor = (answer.get("successor") or {}).get("memory_id")
        done = "released" if verdict == "release" else "discarded"
        click.echo(
            f"{memory_id} {done}" + (f" as {successor}" if successor else "") + f" ({answer['outcome']})."
        )

    return decide


review.command("release", help="Release a quarantined record: recalled and injected from now on.")(
    _decide("release")
)
review.command("discard", help="Discard a quarantined record (it is tombstoned, never recalled).")(
    _decide("tombstone")
)


# -- proposals ------------------------------------------------------------------------------------


@review.command("proposals")
@_gateway_options
@click.option("--realm", default=None, help="One realm (default: every realm).")
@click.option("--limit", default=50, show_default=True, type=click.IntRange(1, 200))
def review_proposals(
    gateway_url: str | None,
    console_token: str | None,
    state_dir: Path | None,
    config_path: Path | None,
    as_json: bool,
    realm: str | None,
    limit: int,
) -> None:
    """The open proposals (pending, or held by a dream), newest first."""
    with _console(gateway_url, console_token, state_dir, config_path) as console:
        params: dict[str, Any] = {"limit": limit}
        if realm is not None:
            params["realm"] = realm
        rows = console.call("meta/memory/panel/proposals", params)["proposals"]
    if as_json:
        _print_json(rows)
        return
    if not rows:
        click.echo("No proposals wait for a decision.")
        return
    from rich.console import Console

    table = _listing(
        f"Open proposals ({len(rows)})",
        "proposal_id",
        [row["proposal_id"] for row in rows],
        ("realm", "scope", "title", "status", "tainted", "proposed"),
    )
    for row in rows:
        table.add_row(
            row["proposal_id"],
            row["realm"],
            f"{row['scope_kind']}:{row['scope_key']}",
            _shown(row["title"]),
            row["status"],
            "yes" if row["tainted"] else "no",
            _when(row["created_at_ms"]),
        )
    Console(highlight=False).print(table)
    click.echo("Show one with `meta_gateway review proposal PROPOSAL_ID ...` before deciding it.")


def _proposal(console: Any, proposal_id: str, realm: str | None) -> dict[str, Any]:
    params: dict[str, Any] = {"proposal_id": proposal_id}
    if realm is not None:
        params["realm"] = realm
    detail: dict[str, Any] = console.call("meta/memory/panel/proposal", params)
    return detail


@review.command("proposal")
@_gateway_options
@click.argument("proposal_id")
@click.option("--realm", default=None, help="The proposal's realm (default: the first holding the id).")
def review_proposal(
    gateway_url: str | None,
    console_token: str | None,
    state_dir: Path | None,
    config_path: Path | None,
    as_json: bool,
    proposal_id: str,
    realm: str | None,
) -> None:
    """One proposal in full, with the content hash a decision is bound to."""
    with _console(gateway_url, console_token, state_dir, config_path) as console:
        detail = _proposal(console, proposal_id, realm)
    if as_json:
        _print_json(detail)
        return
    p = detail["proposal"]
    lines = [
        f"proposal_id   {p['proposal_id']}",
        f"realm         {detail['realm']}",
        f"scope         {p['scope_kind']}:{_shown(p['scope_key'])}",
        f"status        {p['status']}"
        + (" (tainted: an accept waits on a gated promotion)" if p["tainted"] else ""),
        f"author        {json.dumps(p['author'], ensure_ascii=False)}",
        f"kind          {p['kind']}",
        f"tags          {', '.join(p['tags']) or '-'}",
        f"proposed      {_when(p['created_at_ms'])}",
        f"content_hash  {p['content_hash']}",
        "",
        f"title: {_shown(p['title'])}",
        "",
        _shown(p["body"]),
    ]
    click.echo("\n".join(lines))
    if p["status"] in ("pending", "held"):
        click.echo(
            f"\nDecide it: meta_gateway review accept|reject {p['proposal_id']} --hash {p['content_hash']}"
        )


def _decide_proposal(verdict: str) -> Any:
    @_gateway_options
    @click.argument("proposal_id")
    @click.option(
        "--hash",
        "expected_hash",
        required=True,
        help="The content_hash `review proposal` printed: the decision applies only to that version.",
    )
    @click.option("--realm", default=None, help="The proposal's realm (default: the first holding the id).")
    @click.option("--rationale", default=None, help="Why (kept in the audit trail).")
    def decide(
        gateway_url: str | None,
        console_token: str | None,
        state_dir: Path | None,
        config_path: Path | None,
        as_json: bool,
        proposal_id: str,
        expected_hash: str,
        realm: str | None,
        rationale: str | None,
    ) -> None:
        with _console(gateway_url, console_token, state_dir, config_path) as console:
            detail = _proposal(console, proposal_id, realm)
            params: dict[str, Any] = {
                "realm": detail["realm"],
                "proposal_id": proposal_id,
                "verdict": verdict,
                "expected_content_hash": expected_hash,
            }
            if rationale is not None:
                params["rationale"] = rationale
            try:
                answer = console.call("meta/memory/proposals/decide", params)
            except MetaError as exc:
                click.echo(f"meta_gateway: {_as_typed(exc.message)}", err=True)
                sys.exit(EXIT_REFUSED)
        if as_json:
            _print_json(answer)
            return
        record = (answer.get("record") or {}).get("memory_id")
        scope = f"{answer['proposal']['scope_kind']} scope '{answer['proposal']['scope_key']}'"
        outcome = answer["outcome"].removeprefix("already_")
        done = {
            "accepted": f"accepted into {scope}" + (f" as {record}" if record else ""),
            "gated": f"accepted: waiting on gated promotion {answer.get('pending_id') or '(none)'}",
            "rejected": "rejected",
        }[outcome]
        click.echo(f"{proposal_id} {done} ({answer['outcome']}).")

    return decide


review.command("accept", help="Accept a proposal into its mob or operator scope.")(_decide_proposal("accept"))
review.command("reject", help="Reject a proposal (nothing is written to its scope).")(
    _decide_proposal("reject")
)
