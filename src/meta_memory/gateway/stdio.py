"""The stdio transport: JSON-RPC 2.0 as JSON lines on stdin/stdout.

The first line written is the handshake ``{"contract_version": ...}``. Each input line is one
request; each reply is one line; notifications get none. A line longer than the request cap is
drained and answered with -32600 instead of being buffered whole. Logs go to stderr only.
"""

from __future__ import annotations

import json
from typing import IO, Any

from .. import CONTRACT_VERSION
from .dispatch import SDK, STDIO, CallContext, Dispatcher

__all__ = ["serve_stdio", "write_line"]


_ENCODER = json.JSONEncoder(separators=(",", ":"), ensure_ascii=False)  # one, not one per line


def write_line(out: IO[bytes], message: dict[str, Any]) -> None:
    out.write(_ENCODER.encode(message).encode("utf-8") + b"\n")
    out.flush()


def _read_line(inp: IO[bytes], cap: int) -> tuple[bytes | None, bool]:
    """One line without its newline, and whether it overflowed ``cap`` (then drained)."""
    line = inp.readline(cap + 1)
    if not line:
        return None, False
    if len(line) > cap and not line.endswith(b"\n"):
        while True:  # drain the rest of the oversized line in bounded chunks
            chunk = inp.readline(1 << 20)
            if not chunk or chunk.endswith(b"\n"):
                break
        return b"", True
    return line.rstrip(b"\r\n"), False


def serve_stdio(dispatcher: Dispatcher, inp: IO[bytes], out: IO[bytes]) -> None:
    """Serve until stdin closes."""
    write_line(out, {"contract_version": CONTRACT_VERSION})
    ctx = CallContext(surface=SDK, transport=STDIO)
    while True:
        line, overflowed = _read_line(inp, dispatcher.max_request_bytes)
        if line is None:
            return
        if overflowed:
            write_line(out, dispatcher.oversized(ctx))
            continue
        if not line.strip():
            continue
        reply = dispatcher.handle_bytes(line, ctx)
        if reply is not None:
            write_line(out, reply)
