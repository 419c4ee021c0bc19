"""The console's HTTP routes: the server-rendered shell at ``GET /console`` and its static assets.

The shell names the views in its navigation and pins the asset URLs to the package version, so a
new release never runs against a cached script. Its Content-Security-Policy admits only this
origin's script, style and connections: the page renders every value with ``textContent``, and
the policy keeps an injected ``<script>`` from running even if one slipped through.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from html import escape
from importlib import resources

from starlette.requests import Request
from starlette.responses import HTMLResponse, RedirectResponse, Response
from starlette.routing import BaseRoute, Mount, Route
from starlette.staticfiles import StaticFiles

from .. import __version__

__all__ = ["CONSOLE_VIEWS", "SECURITY_HEADERS", "console_routes", "render_shell"]

#: The views of the left navigation, in order: ``(route, label)``.
CONSOLE_VIEWS: tuple[tuple[str, str], ...] = (
    ("records", "Records"),
    ("quarantine", "Quarantine"),
    ("overview", "Overview"),
    ("dreams", "Dream runs"),
    ("proposals", "Proposals"),
    ("harvests", "Harvests"),
    ("injections", "Injections"),
    ("audit", "Audit verdicts"),
    ("timeline", "Timeline"),
)

SECURITY_HEADERS: dict[str, str] = {
    "Content-Security-Policy": (
        "default-src 'none'; script-src 'self'; style-src 'self'; connect-src 'self'; "
        "img-src 'self' data:; base-uri 'none'; form-action 'none'; frame-ancestors 'none'"
    ),
    "X-Content-Type-Options": "nosniff",
    "Referrer-Policy": "no-referrer",
    "Cache-Control": "no-store",
}


def render_shell(static_prefix: str = "/console/static", *, open_console: bool = False) -> str:
    """The console page: the signed-out form, the navigation and an empty main area. With
    ``open_console`` (the console surface takes calls without a token: no console token is
    configured) the page opens the panel at once instead of asking for a token."""
    template = resources.files(__package__).joinpath("shell.html").read_text(encoding="utf-8")
    nav = "\n".join(
        f'        <li><a href="#/{escape(route)}" data-view="{escape(route)}">{escape(label)}</a></li>'
        for route, label in CONSOLE_VIEWS
    )
    version = escape(__version__)
    return (
        template.replace("{{nav}}", nav)
        .replace("{{static}}", escape(static_prefix))
        .replace("{{version}}", version)
        .replace("{{auth}}", "open" if open_console else "token")
    )


def _shell(open_console: bool) -> Callable[[Request], Awaitable[Response]]:
    page = render_shell(open_console=open_console)

    async def shell(request: Request) -> Response:
        return HTMLResponse(page, headers=SECURITY_HEADERS)

    return shell


async def _slash(request: Request) -> Response:
    return RedirectResponse("/console", status_code=308)


def console_routes(*, open_console: bool = False) -> list[BaseRoute]:
    """``GET /console`` (and ``/console/`` redirecting to it) plus ``/console/static/*``;
    ``open_console``: see :func:`render_shell`."""
    return [
        Route("/console", _shell(open_console), methods=["GET"]),
        Route("/console/", _slash, methods=["GET"]),
        Mount(
            "/console/static",
            app=StaticFiles(packages=[(__package__ or "meta_memory.console", "static")]),
            name="console-static",
        ),
    ]
