"""``meta_gateway init``: a commented starter config with the safe defaults, and its two tokens.

The config keeps the ledger persisted and agent memory on (a ``--config`` file replaces the
built-in default wholesale, so it says so itself), gives both HTTP surfaces a bearer token
(``secrets.token_urlsafe``), and stores only their SHA-256 (the hash ``meta_gateway hash-token``
prints). The tokens are printed once, on stdout, as the environment assignments the clients read
(``META_GATEWAY_TOKEN`` for ``POST /rpc``, ``META_CONSOLE_TOKEN`` for the console and
``GET /metrics``); an existing file is never overwritten without ``--force``.
"""

from __future__ import annotations

import os
import re
import secrets
import shlex
import sys
from pathlib import Path

import click

from .access.principal import hash_token
from .config import load_config_file
from .errors import MetaError

__all__ = ["STARTER_CONFIG", "init"]

EXIT_REFUSED = 2
CONFIG_NAME = "meta.toml"

STARTER_CONFIG = """\
# meta-memory gateway configuration, written by `meta_gateway init`. Start the gateway with it:
#
#   {command}
#
# It binds loopback (127.0.0.1:8765) unless --host / --port say otherwise; beyond loopback it
# needs both kinds of tokens below. A --config file replaces the built-in default wholesale:
# [memory] and [agent_memory] keep the ledger persisted and agent memory on. Unknown keys are
# refused at start, naming the key.

[memory]                          # the assertion ledger: one JSON file in the state dir
kind = "local_json"

[agent_memory]                    # identity-scoped memory: one SQLite file per realm
realm = "default"
# llm_writes = "quarantined"      # every write the LLM makes waits for review (the posture for MCP)

# Bearer tokens, kept here only as their SHA-256 (`meta_gateway hash-token` makes more). The
# tokens themselves were printed once by `meta_gateway init`: give them to the callers.

[[rpc.auth.tokens]]               # POST /rpc, with Authorization: Bearer <token>
token_sha256 = "{rpc_sha256}"
subject = "app"

[[console.auth.tokens]]           # the console (GET /console, POST /console/rpc) and GET /metrics
token_sha256 = "{console_sha256}"
subject = "ops"

[http]
# allowed_hosts = ["memory.example.com"]            # the name a proxy in front sends in Host
# allowed_origins = ["https://memory.example.com"]  # the console, served through that proxy
request_timeout_s = 30

[logging]
format = "text"                   # or "json": one JSON object per log line, on stderr

# [metrics]
# token_sha256 = "<meta_gateway hash-token>"        # a scrape token of its own (console tokens work too)
"""


def _comment_safe(text: str) -> str:
    # A path is shown in a TOML comment: a control character there would end or break it.
    return re.sub(r"[\x00-\x1f\x7f]", "?", text)


def _write_new(path: Path, text: str, *, force: bool) -> None:
    """Write ``text`` to ``path`` (mode 0600); an existing file only with ``force``, replaced whole."""
    data = text.encode("utf-8")
    if not force:
        fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
        with os.fdopen(fd, "wb") as f:
            f.write(data)
        return
    partial = path.with_name(path.name + ".partial")
    try:
        fd = os.open(partial, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
        with os.fdopen(fd, "wb") as f:
            f.write(data)
            f.flush()
            os.fsync(f.fileno())
        os.replace(partial, path)
    except BaseException:
        partial.unlink(missing_ok=True)
        raise


@click.command()
@click.option(
    "--state-dir",
    type=click.Path(file_okay=False, path_type=Path),
    default=".meta/state",
    show_default=True,
    envvar="META_STATE_DIR",
    show_envvar=True,
    help="The state directory the config is for (created if absent).",
)
@click.option(
    "--config",
    "config_path",
    type=click.Path(dir_okay=False, path_type=Path),
    default=None,
    envvar="META_CONFIG",
    show_envvar=True,
    help=f"Where to write the config (default: {CONFIG_NAME} in the state directory).",
)
@click.option("--force", is_flag=True, help="Replace an existing config file (its tokens stop working).")
def init(state_dir: Path, config_path: Path | None, force: bool) -> None:
    """Write a commented starter config with generated tokens; print the tokens once.

    Stdout is two lines, META_GATEWAY_TOKEN=<the POST /rpc token> and META_CONSOLE_TOKEN=<the
    console's, which also opens GET /metrics>: the variables `meta_gateway mcp --gateway` and
    `meta_gateway review --gateway` read. Exit status 2 when the file exists (without --force)
    or cannot be written.
    """
    path = config_path if config_path is not None else state_dir / CONFIG_NAME
    if path.exists() and not force:
        click.echo(
            f"meta_gateway: {path} exists; pass --force to replace it (its tokens stop working)", err=True
        )
        sys.exit(EXIT_REFUSED)
    rpc_token, console_token = secrets.token_urlsafe(32), secrets.token_urlsafe(32)
    command = shlex.join(["meta_gateway", "serve", "--state-dir", str(state_dir), "--config", str(path)])
    text = STARTER_CONFIG.format(
        command=_comment_safe(command),
        rpc_sha256=hash_token(rpc_token),
        console_sha256=hash_token(console_token),
    )
    try:
        state_dir.mkdir(parents=True, exist_ok=True)
        path.parent.mkdir(parents=True, exist_ok=True)
        _write_new(path, text, force=force)
    except FileExistsError:
        click.echo(f"meta_gateway: {path} exists; pass --force to replace it", err=True)
        sys.exit(EXIT_REFUSED)
    except OSError as exc:
        click.echo(f"meta_gateway: cannot write {path}: {exc.strerror or exc}", err=True)
        sys.exit(EXIT_REFUSED)
    try:
        load_config_file(path)  # what serve will read: it must load
    except MetaError as exc:  # pragma: no cover - the template is tested to load
        path.unlink(missing_ok=True)
        click.echo(
            f"meta_gateway: the starter config did not load ({exc.message}); nothing written", err=True
        )
        sys.exit(EXIT_REFUSED)
    click.echo(f"META_GATEWAY_TOKEN={rpc_token}")
    click.echo(f"META_CONSOLE_TOKEN={console_token}")
    click.echo(
        f"wrote {path}: it keeps only the tokens' SHA-256, so they are shown this once (above: the POST "
        f"/rpc token, then the console's, which also opens GET /metrics). Start the gateway with\n  {command}",
        err=True,
    )
