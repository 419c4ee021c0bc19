"""The web console: the Memory panel as one HTML shell, one JavaScript module and one stylesheet,
served by the gateway at ``GET /console`` (assets under ``/console/static/``).

The page is a client of ``POST /console/rpc`` and ``GET /console/timeline/stream`` only: it holds
no server state, and the token it signs in with (kept in the tab's ``sessionStorage``) travels as
``Authorization: Bearer`` on every call, the live timeline included, whose stream the page reads
with ``fetch`` rather than ``EventSource`` so the token never appears in a URL or an access log.
"""

from __future__ import annotations

from .routes import CONSOLE_VIEWS, console_routes, render_shell

__all__ = ["CONSOLE_VIEWS", "console_routes", "render_shell"]
