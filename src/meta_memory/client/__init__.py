"""Clients of a running gateway, with the in-process handle's methods, results and errors.

::

    from meta_memory.client import MetaClient

    with MetaClient.connect("http://127.0.0.1:8765", token="...") as meta:   # POST /rpc
        meta.remember_agent_memory("lead:main", title="Deploys", body="Deploys need approval.")

    with MetaClient.spawn(state_dir=".meta/state") as meta:                   # a `meta_gateway stdio` child
        meta.recall_agent_memory("lead:main", query_text="how do deploys work?")

:class:`AsyncMetaClient` has the same methods as coroutines. A wire error is raised as the
:class:`~meta_memory.errors.MetaError` subclass its code names, with ``code``, ``message`` and
``data``; the transport adds :class:`MetaConnectionError` (nothing answered: refused, reset, a
child that exited), its subclass :class:`MetaTimeoutError`, and :class:`MetaAuthenticationError`
(HTTP 401/400 on the credential). Idempotent reads are retried once after a connection error or
a timeout; writes never are (a write that timed out may have been applied).

The console surface (quarantine review, panel reads) is ``client.console`` when connected with a
``console_token`` (or to a gateway whose console is open); stdio carries the application surface only.
"""

from __future__ import annotations

from .async_client import AsyncMetaClient
from .sync_client import MetaClient
from .transport import DEFAULT_TIMEOUT_S, MetaAuthenticationError, MetaConnectionError, MetaTimeoutError

__all__ = [
    "DEFAULT_TIMEOUT_S",
    "AsyncMetaClient",
    "MetaAuthenticationError",
    "MetaClient",
    "MetaConnectionError",
    "MetaTimeoutError",
]
