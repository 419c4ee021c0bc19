"""What the clients share: the transport errors, the JSON-RPC envelope, the child's command line,
and a config mapping written as the TOML file ``meta_gateway --config`` reads."""

from __future__ import annotations

import itertools
import json
import os
import shutil
import sys
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from ..errors import MetaError, error_from_wire

__all__ = [
    "DEFAULT_TIMEOUT_S",
    "MetaAuthenticationError",
    "MetaConnectionError",
    "MetaTimeoutError",
    "envelope",
    "gateway_argv",
    "raise_for_reply",
    "toml_text",
]

DEFAULT_TIMEOUT_S = 30.0
# A child gets this long to print its handshake (an interpreter start on a busy machine).
SPAWN_TIMEOUT_S = 60.0
CLOSE_GRACE_S = 10.0


class MetaConnectionError(MetaError):
    """Nothing answered the call: the connection was refused or reset, or the child exited.

    Carries no wire ``code`` of its own (the base class's -32603): no reply was received."""


class MetaTimeoutError(MetaConnectionError):
    """No reply within the client's timeout. A write may still have been applied."""


class MetaAuthenticationError(MetaError):
    """The gateway refused the credential (HTTP 401, or 400 for a malformed one); ``data.reason``
    is ``missing_token``, ``invalid_token`` or ``invalid_request``."""

    code = -32030


_ids = itertools.count(1)


def envelope(method: str, params: Mapping[str, Any] | None) -> tuple[int, bytes]:
    """A request's id and its JSON bytes."""
    request_id = next(_ids)
    message: dict[str, Any] = {"jsonrpc": "2.0", "id": request_id, "method": method}
    if params is not None:
        message["params"] = params
    return request_id, json.dumps(message, ensure_ascii=False, separators=(",", ":")).encode("utf-8")


def raise_for_reply(reply: Any) -> Any:
    """The reply's ``result``; its ``error`` raised as the typed exception."""
    if not isinstance(reply, dict) or ("result" not in reply and "error" not in reply):
        raise MetaConnectionError("the gateway sent something that is not a JSON-RPC reply")
    if "error" in reply:
        raise error_from_wire(reply["error"])
    return reply["result"]


def gateway_argv(
    command: str | Sequence[str] | None,
    state_dir: str | os.PathLike[str],
    config_path: Path | None,
    extra: Sequence[str] = (),
) -> list[str]:
    """``meta_gateway stdio --state-dir DIR [--config FILE]``: the command given, else the
    ``meta_gateway`` beside this interpreter, else the one on ``PATH``."""
    if command is None:
        beside = Path(sys.executable).with_name("meta_gateway")
        found = str(beside) if beside.is_file() else shutil.which("meta_gateway")
        base = [found] if found else [sys.executable, "-c", "from meta_memory.cli import main; main()"]
    elif isinstance(command, str):
        base = [command]
    else:
        base = list(command)
    argv = [*base, "stdio", "--state-dir", os.fspath(state_dir)]
    if config_path is not None:
        argv += ["--config", str(config_path)]
    return [*argv, *extra]


def _toml_value(value: Any, where: str) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int | float):
        return json.dumps(value)
    if isinstance(value, str):
        return json.dumps(value, ensure_ascii=False)  # a JSON string is a TOML basic string
    if isinstance(value, Mapping):
        items = (
            f"{json.dumps(str(k))} = {_toml_value(v, f'{where}.{k}')}"
            for k, v in value.items()
            if v is not None
        )
        return "{" + ", ".join(items) + "}"
    if isinstance(value, list | tuple):
        return "[" + ", ".join(_toml_value(v, where) for v in value) + "]"
    raise TypeError(f"config {where}: {type(value).__name__} has no TOML form")


def toml_text(config: Mapping[str, Any]) -> str:
    """A config mapping as TOML (each top-level key one line, tables inline)."""
    return "".join(
        f"{json.dumps(str(k))} = {_toml_value(v, str(k))}\n" for k, v in config.items() if v is not None
    )
