"""``meta_gateway purge``: erase a memory's lineage, or everything of an identity, outside the console.

The console's own call (``meta/agent_memory/purge``), against a running gateway (``--gateway URL``
with a console token holding ``agent.memory.admin``) or directly on a state dir no runtime holds
(``--state-dir``, as ``local:<user>``). It asks for confirmation unless ``--yes``; the receipt
(ids and content hashes, never content) is printed.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

import click

from .cli_review import EXIT_REFUSED, _console, _gateway_options
from .errors import MetaError

__all__ = ["purge"]


@click.command("purge")
@_gateway_options
@click.option("--identity", required=True, help="Whose memory to purge.")
@click.option("--memory-id", default=None, help="Purge this record and its whole lineage.")
@click.option("--all", "everything", is_flag=True, help="Purge everything of the identity in the realm.")
@click.option("--realm", default=None, help="The realm (default: the configured [agent_memory] realm).")
@click.option("--yes", is_flag=True, help="Do not ask for confirmation.")
def purge(
    gateway_url: str | None,
    console_token: str | None,
    state_dir: Path | None,
    config_path: Path | None,
    as_json: bool,
    identity: str,
    memory_id: str | None,
    everything: bool,
    realm: str | None,
    yes: bool,
) -> None:
    """Erase memory for real: no file or table keeps the text afterwards (see docs/lifecycle.md).

    Give --memory-id (that record, its versions, released successors, quarantined originals and
    promoted copies) or --all (everything of --identity in the realm). Exit status: 0 when purged,
    1 when not confirmed, 2 when refused.
    """
    from .cli import _check_names

    _check_names(realm, identity)
    if (memory_id is None) == (not everything):
        raise click.UsageError("give exactly one of --memory-id ID and --all")
    if state_dir is not None and not state_dir.is_dir():
        click.echo(f"meta_gateway: state dir {state_dir} does not exist: nothing to purge", err=True)
        sys.exit(EXIT_REFUSED)
    what = f"record {memory_id} and its lineage" if memory_id else "EVERYTHING"
    where = f"realm {realm}" if realm else "the default realm"
    if not yes and not click.confirm(
        f"Erase {what} of {identity} in {where}? This cannot be undone", err=True
    ):
        sys.exit(1)
    params: dict[str, object] = {"identity": identity}
    params.update({"memory_id": memory_id} if memory_id else {"all": True})
    if realm is not None:
        params["realm"] = realm
    with _console(gateway_url, console_token, state_dir, config_path) as console:
        try:
            receipt = console.call("meta/agent_memory/purge", params)
        except MetaError as exc:
            click.echo(f"meta_gateway: {exc.message}", err=True)
            sys.exit(EXIT_REFUSED)
    if as_json:
        click.echo(json.dumps(receipt, indent=2))
        return
    for entry in receipt["records"]:
        click.echo(f"{entry['memory_id']}  {entry['status']:<12} sha256:{entry['content_hash']}")
    receipt_id = receipt["receipt_id"] or "none (the realm does not exist)"
    click.echo(f"purged {len(receipt['records'])} record(s) of {identity}; receipt {receipt_id}", err=True)
