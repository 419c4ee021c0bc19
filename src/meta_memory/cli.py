"""The ``meta_gateway`` command: serve, stdio, mcp, review (cli_review.py), init (cli_init.py),
adoption, doctor, legacy import, storage copy, export and import, hash-token.

This is the edge where files and the environment are read and where library errors become
clean messages and exit codes (2 for a refused boot or bad config). Library code never exits.
The common flags take their defaults from the environment (``META_STATE_DIR``, ``META_CONFIG``,
``META_HOST``, ``META_PORT``, ``META_LOG_LEVEL``, ``META_LOG_FORMAT``, ...; ``--help`` names
each); a flag on the command line wins.
"""

from __future__ import annotations

import contextlib
import logging
import signal
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any, NoReturn, TypeVar

import click

from .api import Call, MetaApi, R
from .config import DEFAULT_CONFIG, MetaConfig, load_config_dict, load_config_file
from .errors import ConfigError, MetaError, StorageRefused
from .gateway.dispatch import MCP, CallContext, to_wire_error
from .gateway.methods import build_dispatcher
from .gateway.stdio import serve_stdio, write_line
from .gateway.telemetry import Telemetry
from .logs import FORMATS, JsonFormatter, configure_logging, stop_logging
from .runtime import MetaRuntime
from .storage.adopt import adopt_predecessor
from .storage.layout import StateLayout

__all__ = ["main"]

F = TypeVar("F", bound=Callable[..., Any])

DEFAULT_STATE_DIR = ".meta/state"
EXIT_REFUSED = 2

STATE_DIR_ENV = "META_STATE_DIR"
CONFIG_ENV = "META_CONFIG"


def state_dir_with(help: str) -> Callable[[F], F]:
    """``--state-dir`` (default ``.meta/state``, ``META_STATE_DIR``) with a command's own help."""
    return click.option(
        "--state-dir",
        type=click.Path(file_okay=False, path_type=Path),
        default=DEFAULT_STATE_DIR,
        show_default=True,
        envvar=STATE_DIR_ENV,
        show_envvar=True,
        help=help,
    )


state_dir_option = state_dir_with("State directory (created if absent).")
config_option = click.option(
    "--config",
    "config_path",
    type=click.Path(dir_okay=False, path_type=Path),
    default=None,
    envvar=CONFIG_ENV,
    show_envvar=True,
    help="TOML config, taken as written (it replaces the built-in default wholesale). Without it: "
    "ledger persisted, agent memory on. `meta_gateway init` writes a starter one.",
)
log_level_option = click.option(
    "--log-level",
    type=click.Choice(["debug", "info", "warning", "error"], case_sensitive=False),
    default="info",
    show_default=True,
    envvar="META_LOG_LEVEL",
    show_envvar=True,
)
log_format_option = click.option(
    "--log-format",
    type=click.Choice(FORMATS, case_sensitive=False),
    default=None,
    envvar="META_LOG_FORMAT",
    show_envvar=True,
    help="Log lines on stderr: text, or one JSON object per line (default: [logging] format of the "
    "config, else text).",
)

log_requests_option = click.option(
    "--log-requests",
    is_flag=True,
    envvar="META_LOG_REQUESTS",
    show_envvar=True,
    help="One log line per request on stderr (off by default here; on with --log-level debug too).",
)

log = logging.getLogger("meta_memory.cli")

# The loggers of per-request lines: the gateway's own, and httpx's (one per call an MCP server
# makes to a gateway).
REQUEST_LOGGERS = ("meta_memory.gateway.requests", "httpx")


def _request_lines(on: bool) -> None:
    """Per-request log lines on or off. A trusted channel's parent (stdio, MCP) often pipes
    stderr and never reads it: thousands of lines it did not ask for would only be dropped."""
    for name in REQUEST_LOGGERS:
        logging.getLogger(name).setLevel(logging.NOTSET if on else logging.WARNING)


def _logging_json() -> bool:
    return any(isinstance(h.formatter, JsonFormatter) for h in logging.getLogger().handlers)


def _say(message: str) -> None:
    """A line for the operator on stderr (a log object, in JSON)."""
    if _logging_json():
        log.info("%s", message)
    else:
        click.echo(message, err=True)


def _refuse(message: str) -> NoReturn:
    """Refuse to start (exit 2), saying why on stderr (as a JSON log object in JSON)."""
    if _logging_json():
        log.error("%s", message)
    else:
        click.echo(f"meta_gateway: {message}", err=True)
    sys.exit(EXIT_REFUSED)


def _read_config(path: Path | None) -> MetaConfig:
    if path is None:
        return load_config_dict(DEFAULT_CONFIG, source="built-in default")
    return load_config_file(path)


def _warn_missing_sections(path: Path | None, config: MetaConfig) -> None:
    """One warning when a --config file leaves out what the built-in default turns on."""
    if path is None:
        return
    off = []
    if "agent_memory" not in config.model_fields_set:
        off.append(
            "no [agent_memory], so agent memory is off (remember, recall, host sessions and the memory tool are refused)"
        )
    if config.memory is None:
        off.append(
            "no [memory], so the assertion ledger is kept in memory only and lost when the process exits"
        )
    if off:
        log.warning(
            "%s has %s; a --config file replaces the built-in default wholesale: add the section(s) to "
            "keep them on (`meta_gateway init` writes a starter config)",
            path,
            "; and ".join(off),
        )


def _load_config(path: Path | None) -> MetaConfig:
    config = _read_config(path)
    _warn_missing_sections(path, config)
    return config


def _start_logging(
    level: str, log_format: str | None, config_path: Path | None, *, requests: bool = True
) -> MetaConfig:
    """Logging for a serving command, and its config: ``--log-format``, else the config's
    ``[logging] format``; per-request lines when ``requests`` (or at debug level); then the one
    warning about sections the config file leaves out.

    Raises:
        ConfigError: the config cannot be read (logging is then set up by the flag alone).
    """
    configure_logging(level, log_format or "text")
    _request_lines(requests or level.lower() == "debug")
    config = _read_config(config_path)
    if log_format is None and config.logging.format != "text":
        configure_logging(level, config.logging.format)
    _warn_missing_sections(config_path, config)
    return config


def _boot(state_dir: Path, config_path: Path | None) -> MetaRuntime:
    return MetaRuntime.open(state_dir, _load_config(config_path), serving=True)


def _exit_cleanly(signum: int, frame: object) -> None:
    raise SystemExit(0)


@click.group(context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(package_name="meta-memory")
def main() -> None:
    """Meta memory gateway: agent memory, the assertion ledger and the memory firewall over JSON-RPC."""
    # Every command's log lines reach stderr before it returns (the writer thread ends with it).
    click.get_current_context().call_on_close(stop_logging)


@main.command()
@state_dir_option
@config_option
@log_level_option
@log_format_option
@log_requests_option
def stdio(
    state_dir: Path, config_path: Path | None, log_level: str, log_format: str | None, log_requests: bool
) -> None:
    """Serve JSON-RPC 2.0 as JSON lines on stdin/stdout."""
    out = sys.stdout.buffer
    try:
        config = _start_logging(log_level, log_format, config_path, requests=log_requests)
        runtime = MetaRuntime.open(state_dir, config, serving=True)
    except (ConfigError, StorageRefused, MetaError) as exc:
        write_line(out, {"jsonrpc": "2.0", "id": None, "error": to_wire_error(exc)})
        _refuse(exc.message)
    # SIGTERM ends the loop like EOF does, so the runtime closes cleanly.
    signal.signal(signal.SIGTERM, lambda *_: (_ for _ in ()).throw(KeyboardInterrupt()))
    try:
        serve_stdio(build_dispatcher(runtime, observer=Telemetry()), sys.stdin.buffer, out)
    except (KeyboardInterrupt, BrokenPipeError):
        pass
    finally:
        runtime.close()


@main.command()
@state_dir_option
@config_option
@log_level_option
@log_format_option
@click.option(
    "--host",
    default="127.0.0.1",
    show_default=True,
    envvar="META_HOST",
    show_envvar=True,
    help="Address to bind (beyond loopback, see --allow-unauthenticated).",
)
@click.option(
    "--port",
    default=8765,
    show_default=True,
    type=click.IntRange(1, 65535),
    envvar="META_PORT",
    show_envvar=True,
    help="TCP port to listen on (1-65535).",
)
@click.option(
    "--allow-unauthenticated",
    is_flag=True,
    help="Serve beyond loopback without both kinds of tokens: only behind a proxy that authenticates every request.",
)
def serve(
    state_dir: Path,
    config_path: Path | None,
    log_level: str,
    log_format: str | None,
    host: str,
    port: int,
    allow_unauthenticated: bool,
) -> None:
    """Serve JSON-RPC over HTTP: POST /rpc, POST /console/rpc, GET /v1/health, GET /metrics, the console."""
    from .gateway.http import build_app, check_console_exposure
    from .gateway.security import is_loopback_host
    from .gateway.server import listening_socket, serve_http

    try:
        config = _start_logging(log_level, log_format, config_path)
    except MetaError as exc:
        _refuse(exc.message)
    if not is_loopback_host(host):
        missing = _unauthenticated_surfaces(config)
        if missing and not allow_unauthenticated:
            _refuse(
                f"refusing to serve on {host}, which is not a loopback address, while "
                f"{' and '.join(missing)}; configure both kinds of tokens (`meta_gateway hash-token`), or "
                "pass --allow-unauthenticated if a proxy in front authenticates every request"
            )
        if missing:
            logging.getLogger("meta_memory.gateway").warning(
                "serving on %s without authentication (%s): --allow-unauthenticated trusts the proxy in "
                "front to authenticate every request",
                host,
                "; ".join(missing),
            )
    try:
        check_console_exposure(config)  # on every host, before the state dir is touched
    except ConfigError as exc:
        _refuse(exc.message)
    try:  # the address first: a port in use is one line, before the state dir is touched
        sock = listening_socket(host, port)
    except OSError as exc:
        _refuse(f"cannot listen on {host}:{port} (--host, --port): {exc.strerror or exc}")
    try:
        runtime = MetaRuntime.open(state_dir, config, serving=True)
    except MetaError as exc:
        sock.close()
        _refuse(exc.message)
    try:
        app = build_app(runtime, host=host, port=port, on_shutdown=runtime.close)
    except MetaError as exc:
        runtime.close()
        sock.close()
        _refuse(exc.message)
    _say(f"meta_gateway serving {runtime.state_dir} on http://{_url_host(host)}:{port}")
    # uvicorn shuts down gracefully on SIGINT/SIGTERM, then re-raises the signal to the handler it
    # found; ours makes that graceful stop a clean exit (status 0, like stdio) instead of a kill.
    for signum in (signal.SIGINT, signal.SIGTERM):
        signal.signal(signum, _exit_cleanly)
    try:
        serve_http(
            app,
            sock=sock,
            host=host,
            port=port,
            log_level=log_level,
            request_timeout_s=config.http.request_timeout_s,
            log_format="json" if _logging_json() else "text",
            on_timeout=app.state.telemetry.timed_out,
        )
    finally:
        runtime.close()


def _url_host(host: str) -> str:
    return f"[{host}]" if ":" in host else host


def _unauthenticated_surfaces(config: MetaConfig) -> list[str]:
    """What would let an unauthenticated caller in, beyond loopback (empty: nothing)."""
    missing = []
    if not config.rpc.auth.tokens:
        missing.append("[[rpc.auth.tokens]] holds no token (POST /rpc is open)")
    if not config.console.auth.tokens:
        missing.append("[[console.auth.tokens]] holds no token (the console is open)")
    elif config.console.auth.anonymous_allowed:
        missing.append("[console.auth] allow_anonymous = true (the console is open)")
    return missing


@main.command()
@click.option(
    "--state-dir",
    type=click.Path(file_okay=False, path_type=Path),
    default=None,
    envvar=STATE_DIR_ENV,
    show_envvar=True,
    help="State directory to own (created if absent; give an absolute path, MCP clients start servers "
    "anywhere). Or --gateway instead.",
)
@click.option(
    "--gateway",
    "gateway_url",
    default=None,
    metavar="URL",
    envvar="META_GATEWAY_URL",
    show_envvar=True,
    help="Serve through a running `meta_gateway serve` at URL instead of owning a state dir: any number "
    "of MCP servers then share one gateway, whose console reviews their writes.",
)
@click.option(
    "--token",
    default=None,
    envvar="META_GATEWAY_TOKEN",
    show_envvar=True,
    help="With --gateway: the [[rpc.auth.tokens]] bearer token (prefer the environment variable).",
)
@click.option("--identity", required=True, help="The identity whose memory this server serves.")
@click.option(
    "--realm", default=None, help="Realm of the identity (default: agent_memory.realm of the config)."
)
@config_option
@log_level_option
@log_format_option
@log_requests_option
def mcp(
    state_dir: Path | None,
    gateway_url: str | None,
    token: str | None,
    identity: str,
    realm: str | None,
    config_path: Path | None,
    log_level: str,
    log_format: str | None,
    log_requests: bool,
) -> None:
    """Serve one identity's memory tool and memory context over MCP (stdio)."""
    from .names import realm_problem

    if realm is not None and (problem := realm_problem(realm)) is not None:
        raise click.BadParameter(problem, param_hint="--realm")
    state_dir, gateway_url, config_path = settle_environment(state_dir, gateway_url, config_path)
    if (state_dir is None) == (gateway_url is None):
        raise click.UsageError(
            "give exactly one of --state-dir (own the state) and --gateway (use a running gateway)"
        )
    if gateway_url is not None and config_path is not None:
        raise click.UsageError(
            "--config configures a runtime of this process's own: with --gateway, the gateway's config applies"
        )
    with contextlib.ExitStack() as owned:
        try:
            if gateway_url is not None:
                configure_logging(log_level, log_format or "text")  # the gateway's config is its own
                _request_lines(log_requests or log_level.lower() == "debug")
                api: Any = _gateway_client(gateway_url, token)
            else:
                assert state_dir is not None
                config = _start_logging(log_level, log_format, config_path, requests=log_requests)
                api = _OwnRuntime(MetaRuntime.open(state_dir, config, serving=True))
        except MetaError as exc:
            _refuse(exc.message)
        owned.callback(api.close)
        # Imported here: the SDK's import time is paid by this command only.
        import anyio

        from .mcp_server import MemoryMcpServer

        try:
            server = MemoryMcpServer(api, identity, realm)
        except MetaError as exc:
            _refuse(exc.message)
        # The SDK reads stdin in a worker thread no signal interrupts (python-sdk issue #3551): a
        # cancelled loop would wait for the client's next line. So SIGINT ends the process at once,
        # like SIGTERM; SQLite's WAL survives that and the OS drops the state-dir lock. The clean
        # shutdown is the MCP one: the client closes stdin.
        signal.signal(signal.SIGINT, signal.SIG_DFL)
        try:
            anyio.run(server.serve_stdio)
        finally:
            server.close()


def _register_subcommands() -> None:
    from .cli_init import init
    from .cli_purge import purge
    from .cli_review import review

    main.add_command(review)
    main.add_command(init)
    main.add_command(purge)


_register_subcommands()


def settle_environment(
    state_dir: Path | None, gateway_url: str | None, config_path: Path | None
) -> tuple[Path | None, str | None, Path | None]:
    """For a command that works on a state dir or through a gateway: an environment default
    (``META_STATE_DIR``, ``META_GATEWAY_URL``, ``META_CONFIG``) gives way to the flag on the
    command line that contradicts it."""
    if state_dir is not None and gateway_url is not None:
        if _from_env("state_dir") and not _from_env("gateway_url"):
            state_dir = None
        elif _from_env("gateway_url") and not _from_env("state_dir"):
            gateway_url = None
    if gateway_url is not None and config_path is not None and _from_env("config_path"):
        config_path = None
    return state_dir, gateway_url, config_path


def _from_env(param: str) -> bool:
    """Whether the current command's ``param`` took its value from the environment."""
    source = click.get_current_context().get_parameter_source(param)
    return source is click.core.ParameterSource.ENVIRONMENT


def _gateway_client(gateway_url: str, token: str | None) -> Any:
    """The MCP server's API as a client of a running gateway, checked now: unreachable, or a bad
    token, refuses the start rather than the first tool call."""
    from .client import MetaClient

    client = MetaClient.connect(gateway_url, token=token)
    try:
        client.status()
    except MetaError:
        client.close()
        raise
    return client


class _OwnRuntime(MetaApi):
    """A runtime of this process for the MCP server: the in-process handle's calls, each one
    logged as the ``mcp`` surface (gateway/telemetry.py)."""

    def __init__(self, runtime: MetaRuntime) -> None:
        self.runtime = runtime
        self._dispatcher = build_dispatcher(runtime, observer=Telemetry())

    def _invoke(self, call: Call[R]) -> R:
        ctx = CallContext(surface=call.surface, transport=MCP)
        return call.read(self._dispatcher.call(call.method, call.params, ctx))

    def close(self) -> None:
        self.runtime.close()


@main.command("storage-adopt-predecessor")
@click.option(
    "--state-dir",
    type=click.Path(file_okay=False, path_type=Path),
    required=True,
    envvar=STATE_DIR_ENV,
    show_envvar=True,
)
@click.option("--apply", "apply_", is_flag=True, help="Rename for real (without it: a dry run).")
def storage_adopt_predecessor(state_dir: Path, apply_: bool) -> None:
    """Adopt a predecessor (pre-0.9) ledger once, by a byte-for-byte rename in place."""
    try:
        report = adopt_predecessor(StateLayout.at(state_dir), apply=apply_)
    except MetaError as exc:
        click.echo(f"meta_gateway: {exc.message}", err=True)
        sys.exit(EXIT_REFUSED)
    click.echo(report.message)


EXIT_DOCTOR_ERRORS = 1


@main.command()
@click.option(
    "--state-dir",
    type=click.Path(path_type=Path),
    default=DEFAULT_STATE_DIR,
    show_default=True,
    envvar=STATE_DIR_ENV,
    show_envvar=True,
    help="State directory to diagnose (read only: nothing is created or written).",
)
@click.option("--identity", default=None, help="Also count this identity's records per status in each realm.")
@click.option("--json", "as_json", is_flag=True, help="Print the meta/storage/doctor result object as JSON.")
@click.option(
    "--config",
    "config_path",
    type=click.Path(dir_okay=False, path_type=Path),
    default=None,
    envvar=CONFIG_ENV,
    show_envvar=True,
    help="The gateway's TOML config: which storage backend to diagnose (default: the embedded one).",
)
def doctor(state_dir: Path, identity: str | None, as_json: bool, config_path: Path | None) -> None:
    """Diagnose a state directory read-only; safe beside a running gateway.

    Exit status: 0 when no finding has severity error, 1 when one does (warnings and info do
    not fail), 2 for bad usage.
    """
    import json

    from . import backends
    from .storage.doctor import diagnose

    if identity is not None and not identity.strip():
        raise click.BadParameter("must be a non-empty string", param_hint="--identity")
    try:
        config = _load_config(config_path)
    except MetaError as exc:
        click.echo(f"meta_gateway: {exc.message}", err=True)
        sys.exit(EXIT_REFUSED)
    diagnosis = diagnose(state_dir, identity, backend=backends.store_doctor(config))
    if as_json:
        click.echo(json.dumps(diagnosis.to_wire(), indent=2, ensure_ascii=False))
    else:
        _print_diagnosis(diagnosis.to_wire())
    if diagnosis.has_errors:
        sys.exit(EXIT_DOCTOR_ERRORS)


def _size(n: int) -> str:
    value = float(n)
    for unit in ("B", "KiB", "MiB", "GiB"):
        if value < 1024 or unit == "GiB":
            return f"{n} B" if unit == "B" else f"{value:.1f} {unit}"
        value /= 1024
    raise AssertionError("unreachable")


def _print_diagnosis(result: dict[str, Any]) -> None:
    from rich import box
    from rich.console import Console
    from rich.markup import escape
    from rich.table import Table

    console = Console(highlight=False)
    state_dir = Path(result["state_dir"])
    findings: list[dict[str, Any]] = result["diagnosis"]["findings"]
    inventory: list[dict[str, Any]] = result["diagnosis"]["inventory"]
    # A path is printed whole on a line of its own (soft_wrap: the terminal may fold it, rich never
    # breaks it), so it can be copied; tables hold no paths.
    console.print(f"[bold]Storage doctor[/bold] {escape(str(state_dir))}", soft_wrap=True)

    def table(title: str) -> Table:
        return Table(
            title=title,
            title_justify="left",
            title_style="bold",
            box=box.SIMPLE_HEAD,
            collapse_padding=True,
            pad_edge=False,
            show_edge=False,
        )

    def shown(path: str) -> str:
        # Paths inside the state dir are shown relative to it: the header names it once.
        inside = Path(path).is_relative_to(state_dir) and Path(path) != state_dir
        return str(Path(path).relative_to(state_dir)) if inside else path

    styles = {"error": "bold red", "warning": "yellow", "info": "cyan"}
    console.print()
    console.print("[bold]Findings[/bold]")
    for f in findings:
        console.print(  # a message may name a path too
            f"[{styles[f['severity']]}]{f['severity']}[/] {escape(f['code'])}  {escape(f['message'])}",
            soft_wrap=True,
        )
        where = [f"realm {f['realm']}"] if "realm" in f else []
        if "path" in f:
            where.append(shown(f["path"]))
        if where:
            console.print(f"  [dim]{escape(' · '.join(where))}[/dim]", soft_wrap=True)
    if inventory:
        statuses = ("active", "quarantined", "superseded", "tombstoned")
        identity = inventory[0].get("identity")
        realms = table("Realms")
        realms.add_column("Realm", ratio=1, overflow="fold")
        for header in ("Schema", "Active", "Quar.", "Sup.", "Tomb.", "Queue", "Fresh"):
            realms.add_column(header, justify="right", no_wrap=True)
        realms.add_column("Size", justify="right", no_wrap=True)
        if identity is not None:
            realms.add_column(f"{escape(identity)}\na/q/s/t", justify="right", no_wrap=True)

        def count(value: Any) -> str:
            return "?" if value is None else str(value)

        for entry in inventory:
            counts = entry["records"] or {}
            row = [
                escape(entry["realm"]),
                count(entry["schema_version"]),
                *(count(counts.get(s)) for s in statuses),
                count(entry["pending_index"]),
                count(entry["unmerged_index"]),
                _size(entry["bytes"]),
            ]
            if identity is not None:
                mine = entry.get("identity_records")
                row.append("/".join(count(mine.get(s)) for s in statuses) if mine else "?")
            realms.add_row(*row)
        console.print()
        console.print(realms)
        for entry in inventory:
            console.print(
                f"  {escape(entry['realm'])}: [dim]{escape(shown(entry['path']))}[/dim]", soft_wrap=True
            )
    errors = sum(1 for f in findings if f["severity"] == "error")
    warnings = sum(1 for f in findings if f["severity"] == "warning")
    console.print()
    console.print(
        f"{errors} error(s), {warnings} warning(s), {len(inventory)} realm file(s)",
        style="bold red" if errors else None,
    )


@main.command("import-legacy")
@state_dir_option
@config_option
@click.option(
    "--realm", "realms", multiple=True, help="Realm(s) to import (default: every realm with markdown)."
)
def import_legacy(state_dir: Path, config_path: Path | None, realms: tuple[str, ...]) -> None:
    """Import legacy per-identity markdown memory now, with progress (otherwise it runs on first access)."""
    from rich.progress import Progress

    from .names import realm_problem
    from .storage.layout import decode_component

    for realm in realms:
        if (problem := realm_problem(realm)) is not None:
            raise click.BadParameter(problem, param_hint="--realm")
    try:
        runtime = _boot(state_dir, config_path)
    except MetaError as exc:
        click.echo(f"meta_gateway: {exc.message}", err=True)
        sys.exit(EXIT_REFUSED)
    try:
        memory = runtime.agent_memory
        if memory is None:
            raise ConfigError("agent memory is not enabled in this config")
        found = memory.root.iterdir() if memory.root.is_dir() else iter(())
        targets = list(realms) or sorted(
            r for p in found if p.is_dir() and (r := decode_component(p.name)) is not None
        )
        totals: dict[str, Any] = {"files": 0, "imported": 0, "skipped": 0, "failed_files": 0}
        with Progress(transient=False) as progress:
            for realm in targets:
                task = progress.add_task(f"realm {realm}", total=None)

                def tick(name: str, done: int, total: int, task: Any = task, realm: str = realm) -> None:
                    progress.update(task, completed=done, total=total, description=f"realm {realm} {name}")

                memory.store(realm, progress=tick)  # the first access is the import
                report = memory.import_reports.get(realm)
                for key in totals:
                    totals[key] += getattr(report, key) if report is not None else 0
        click.echo(
            f"imported {totals['imported']} records from {totals['files']} files "
            f"({totals['skipped']} skipped, {totals['failed_files']} files failed)"
        )
    except MetaError as exc:
        click.echo(f"meta_gateway: {exc.message}", err=True)
        sys.exit(EXIT_REFUSED)
    finally:
        runtime.close()


@main.command("storage-copy")
@click.option(
    "--state-dir",
    type=click.Path(file_okay=False, path_type=Path),
    required=True,
    envvar=STATE_DIR_ENV,
    show_envvar=True,
    help="The state dir whose SQLite realms (and timeline) to copy; no gateway may serve it meanwhile.",
)
@click.option(
    "--to-postgres",
    "dsn",
    required=True,
    envvar="META_STORAGE_COPY_DSN",
    show_envvar=True,
    help="The PostgreSQL DSN to copy into (or META_STORAGE_COPY_DSN, which keeps a password out of "
    "process listings).",
)
@click.option(
    "--realm", "realms", multiple=True, help="Realm(s) to copy (default: every realm and the timeline)."
)
def storage_copy(state_dir: Path, dsn: str, realms: tuple[str, ...]) -> None:
    """Copy a state dir's agent memory and timeline into PostgreSQL, verified; safe to run again.

    Exit status: 0 when every part is copied (or was before), 1 when one was refused, 2 when
    nothing could start (no state dir, a gateway serving it, an unreachable database).
    """
    from rich.console import Console
    from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeRemainingColumn
    from rich.table import Table

    from .names import realm_problem
    from .storage_copy import PartReport, copy_to_postgres

    configure_logging("warning", "text")
    for realm in realms:
        if (problem := realm_problem(realm)) is not None:
            raise click.BadParameter(problem, param_hint="--realm")
    console = Console(stderr=True)
    with Progress(
        TextColumn("{task.description}"),
        BarColumn(),
        MofNCompleteColumn(),
        TimeRemainingColumn(),
        console=console,
    ) as bar:
        tasks: dict[str, Any] = {}

        class Shown:
            def start(self, part: str, total: int) -> None:
                tasks[part] = bar.add_task(part, total=total)

            def advance(self, part: str, rows: int) -> None:
                bar.advance(tasks[part], rows)

            def finish(self, report: PartReport) -> None:
                if report.part in tasks:
                    shown = report.part if report.outcome == "copied" else f"{report.part} ({report.outcome})"
                    bar.update(
                        tasks[report.part], description=shown, completed=report.rows, total=report.rows or 1
                    )

        try:
            reports = copy_to_postgres(state_dir, dsn, realms=list(realms) or None, progress=Shown())
        except MetaError as exc:
            bar.stop()
            click.echo(f"meta_gateway: {exc.message}", err=True)
            sys.exit(EXIT_REFUSED)
    table = Table("part", "rows", "outcome", "detail")
    for report in reports:
        detail = report.message or (f"sha256 {report.digest[:16]}…" if report.digest else "")
        table.add_row(report.part, str(report.rows), report.outcome.replace("_", " "), detail)
    Console().print(table)
    if not reports:
        click.echo("nothing to copy: the state dir holds no realm file and no timeline")
    refused = [r for r in reports if r.outcome == "refused"]
    for report in refused:
        click.echo(f"meta_gateway: {report.part} not copied: {report.message}", err=True)
    if refused:
        sys.exit(EXIT_COPY_REFUSED)


EXIT_COPY_REFUSED = 1


@main.command("hash-token")
@click.option(
    "--token",
    default=None,
    help="The token to hash. Without it the token is read from stdin (prompted, hidden, on a terminal); "
    "prefer stdin: a command-line argument lands in shell history and process listings.",
)
def hash_token_command(token: str | None) -> None:
    """Print the SHA-256 of a bearer token, for `token_sha256` in either kind of token entry:
    [[console.auth.tokens]] (the console, POST /console/rpc, GET /metrics) or [[rpc.auth.tokens]]
    (the application surface, POST /rpc). The config keeps only this hash."""
    from .access.principal import hash_token

    if token is None:
        if sys.stdin.isatty():
            token = click.prompt("console token", hide_input=True, err=True)
        else:
            token = sys.stdin.readline()
        token = token.rstrip("\r\n")
    try:
        click.echo(hash_token(token))
    except ValueError as exc:
        click.echo(f"meta_gateway: {exc}", err=True)
        sys.exit(EXIT_REFUSED)


# -- export and import (memory/transfer/, docs/export-import.md) ----------------------------------

EXIT_IMPORT_REFUSED = EXIT_COPY_REFUSED  # 1: some lines were refused; the others are in
LARGE_IMPORT = 10_000  # entries: an import this long shows its progress even off a terminal


def _printable(text: str) -> str:
    """File-borne text as a report line may show it: no control characters, nothing unencodable."""
    import re

    text = text.encode("utf-8", "backslashreplace").decode("utf-8")
    return re.sub(r"[\x00-\x1f\x7f]", lambda m: f"\\x{ord(m.group()):02x}", text)


def _check_names(realm: str | None, identity: str | None) -> None:
    """``--realm`` and ``--identity`` by the rules every surface applies (bad usage: exit 2)."""
    from .errors import InvalidParams
    from .memory.params import parse_identity
    from .names import realm_problem

    if realm is not None and ((problem := realm_problem(realm)) is not None or realm != realm.strip()):
        raise click.BadParameter(problem or "must not begin or end with whitespace", param_hint="--realm")
    if identity is not None:
        try:
            parse_identity({"identity": identity})
        except InvalidParams as exc:
            raise click.BadParameter(exc.message, param_hint="--identity") from None


@main.command("export")
@state_dir_with("State directory to export (it must exist; no gateway may serve it meanwhile).")
@config_option
@click.option("--realm", default=None, help="Export this realm only (default: every realm).")
@click.option("--identity", default=None, help="Export this identity's records only.")
@click.option(
    "--include-history",
    is_flag=True,
    help="Add superseded and tombstoned records (forgotten, discarded, released originals): lineage round-trips.",
)
@click.option(
    "--output",
    "-o",
    type=click.Path(dir_okay=False, allow_dash=True, path_type=Path),
    default=None,
    help="The file to write (default: standard output); it appears whole or not at all.",
)
def export_command(
    state_dir: Path,
    config_path: Path | None,
    realm: str | None,
    identity: str | None,
    include_history: bool,
    output: Path | None,
) -> None:
    """Write agent memory out as JSON lines: a header, then one record per line.

    Exit status: 0 when the export is written, 2 when nothing could be exported (no state dir,
    a gateway serving it, a bad config, an unknown --realm).
    """
    import os

    from .memory.transfer import export_realms

    _check_names(realm, identity)
    if not state_dir.is_dir():
        click.echo(f"meta_gateway: state dir {state_dir} does not exist: nothing to export", err=True)
        sys.exit(EXIT_REFUSED)
    try:
        runtime = MetaRuntime.open(state_dir, _load_config(config_path), serving=False)
    except MetaError as exc:
        click.echo(f"meta_gateway: {exc.message}", err=True)
        sys.exit(EXIT_REFUSED)
    try:
        memory = runtime.agent_memory
        if memory is None:
            raise ConfigError("agent memory is not enabled in this config")
        if realm is not None and not memory.has_realm(realm):
            raise StorageRefused(f"realm {realm!r} has no store in this state dir: nothing to export")
        realms = [realm] if realm is not None else memory.realms()
        stores = (memory.store(r) for r in realms)
        options: dict[str, Any] = {"include_history": include_history, "realm": realm, "identity": identity}
        if output is None or str(output) == "-":
            count = export_realms(stores, sys.stdout.buffer.write, **options)
            sys.stdout.buffer.flush()
        else:
            partial = output.with_name(output.name + ".partial")
            try:
                with partial.open("wb") as f:
                    count = export_realms(stores, f.write, **options)
                    f.flush()
                    os.fsync(f.fileno())
                os.replace(partial, output)
            except BaseException:
                partial.unlink(missing_ok=True)
                raise
        click.echo(f"exported {count} records from {len(realms)} realm(s)", err=True)
    except MetaError as exc:
        click.echo(f"meta_gateway: {exc.message}", err=True)
        sys.exit(EXIT_REFUSED)
    except OSError as exc:
        if isinstance(exc, BrokenPipeError):  # `export | head`: the reader left; say nothing more
            os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
            sys.exit(EXIT_IMPORT_REFUSED)
        click.echo(f"meta_gateway: cannot write the export: {exc.strerror or exc}", err=True)
        sys.exit(EXIT_REFUSED)
    finally:
        runtime.close()


@main.command("backup")
@state_dir_with("State directory to back up; a gateway may serve it meanwhile.")
@click.option(
    "--to",
    "destination",
    required=True,
    type=click.Path(path_type=Path),
    help="The new directory to write the backup to (it must not exist).",
)
def backup_command(state_dir: Path, destination: Path) -> None:
    """Copy a state dir while it is served: each SQLite file through SQLite's online backup (one
    consistent snapshot per file), the rest read whole, with a manifest of sha256 sums.

    Exit status: 0 when the backup is written, 2 when it is refused (no state dir, the destination
    exists, a file cannot be read or written; nothing is left behind).
    """
    from .memory.sqlite.backup import backup

    try:
        report = backup(state_dir, destination)
    except MetaError as exc:
        click.echo(f"meta_gateway: {exc.message}", err=True)
        sys.exit(EXIT_REFUSED)
    click.echo(
        f"backed up {len(report.files)} files ({report.total_bytes:,} bytes) to {report.destination} "
        f"in {report.seconds:.1f} s",
        err=True,
    )


@main.command("restore")
@click.option(
    "--from",
    "backup_dir",
    required=True,
    type=click.Path(file_okay=False, path_type=Path),
    help="The backup directory (`meta_gateway backup --to`).",
)
@state_dir_with("The state directory to restore into; it must not exist or be empty.")
def restore_command(backup_dir: Path, state_dir: Path) -> None:
    """Write a backup as a state dir, after checking every file against its manifest.

    Exit status: 0 when the state dir is written, 2 when the restore is refused (a damaged or
    foreign backup, a state dir that holds anything; nothing is written).
    """
    from .memory.sqlite.backup import restore

    try:
        report = restore(backup_dir, state_dir)
    except MetaError as exc:
        click.echo(f"meta_gateway: {exc.message}", err=True)
        sys.exit(EXIT_REFUSED)
    click.echo(
        f"restored {len(report.files)} files ({report.total_bytes:,} bytes) into {report.destination}; "
        f"check it with: meta_gateway doctor --state-dir {report.destination}",
        err=True,
    )


@main.command("import")
@click.argument("file", type=click.Path(dir_okay=False, allow_dash=True, path_type=Path))
@state_dir_option
@config_option
@click.option(
    "--realm",
    default=None,
    help="A meta export: import only this realm's lines. A mem0 export: the realm to import into "
    "(default: agent_memory.realm of the config).",
)
@click.option(
    "--identity",
    default=None,
    help="A meta export: import only this identity's records. A mem0 export: the identity every "
    "memory goes to (default: each memory's user_id).",
)
@click.option(
    "--format",
    "format_",
    type=click.Choice(["auto", "jsonl", "mem0"]),
    default="auto",
    show_default=True,
    help="The file's format: a meta export (jsonl) or mem0's get_all() JSON; auto tells them apart.",
)
def import_command(
    file: Path,
    state_dir: Path,
    config_path: Path | None,
    realm: str | None,
    identity: str | None,
    format_: Any,
) -> None:
    """Load an export (or a mem0 export) through the store's validator; safe to run again.

    A record already present (same id, same content) is skipped; a line the validator refuses
    (a secret, a field too long, an id taken by other content) is reported on stderr and the
    others still import. A record the file gives as active that carries or reaches a quarantine
    this store holds no release of arrives quarantined, for a reviewer. Exit status: 0 when every line was imported or skipped, 1 when some
    were refused, 2 when nothing could start (an unreadable or malformed file, a gateway serving
    the state dir, a bad config).
    """
    from contextlib import nullcontext

    from rich.console import Console
    from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeRemainingColumn

    from .clock import SystemClock
    from .memory.records import Author
    from .memory.transfer import bytes_opener, import_source, read_source

    _check_names(realm, identity)
    stdin = str(file) == "-"
    name = "<stdin>" if stdin else file.name
    try:
        config = _load_config(config_path)
        opener = bytes_opener(sys.stdin.buffer.read()) if stdin else (lambda: file.open("rb"))
        source = read_source(
            opener,
            name,
            format=format_,
            realm=realm or config.agent_memory.realm,
            identity=identity,
            now_ms=SystemClock().now_ms(),
        )
        runtime = MetaRuntime.open(state_dir, config, serving=False)
    except MetaError as exc:
        click.echo(f"meta_gateway: {_printable(exc.message)}", err=True)
        sys.exit(EXIT_REFUSED)
    console = Console(stderr=True)
    shown = console.is_terminal or source.count >= LARGE_IMPORT
    bar = (
        Progress(
            TextColumn("{task.description}"),
            BarColumn(),
            MofNCompleteColumn(),
            TimeRemainingColumn(),
            console=console,
        )
        if shown
        else None
    )
    try:
        memory = runtime.agent_memory
        if memory is None:
            raise ConfigError("agent memory is not enabled in this config")
        with bar if bar is not None else nullcontext():
            task = bar.add_task(f"importing {_printable(name)}", total=source.count) if bar else None
            report = import_source(
                source,
                memory.store,
                author=Author("operator"),
                realm=realm if source.format == "jsonl" else None,
                identity=identity if source.format == "jsonl" else None,
                progress=(lambda n: bar.advance(task, n)) if bar is not None and task is not None else None,
            )
    except MetaError as exc:
        click.echo(
            f"meta_gateway: {exc.message}; what was imported before stays, and a second run skips it",
            err=True,
        )
        sys.exit(EXIT_REFUSED)
    finally:
        runtime.close()
    for o in report.outcomes:
        what = f"{o.outcome}, {o.rule}: {o.message}" if o.outcome == "refused" else (o.message or o.outcome)
        notes = "".join(f"; {note}" for note in o.notes)
        ident = f" ({o.memory_id})" if o.memory_id is not None else ""
        click.echo(_printable(f"meta_gateway: {name} {o.at}{ident}: {what}{notes}"), err=True)
    selected = f"; {report.not_selected} not selected" if report.not_selected else ""
    held = f"; {report.quarantined} arrived quarantined, for review" if report.quarantined else ""
    click.echo(
        _printable(
            f"imported {report.imported}, skipped {report.skipped}, refused {report.refused} "
            f"of {source.count} records in {name} ({source.format}){held}{selected}"
        )
    )
    if report.refused:
        sys.exit(EXIT_IMPORT_REFUSED)
