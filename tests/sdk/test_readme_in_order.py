"""The README, run in order on one machine, as a new user follows it.

Every fenced code block of README.md is walked in document order and run (or checked) by the
handler its pattern selects; a block no handler claims fails the test, so a new block forces a
decision about how it is run. The walk is one scenario with shared state, in a fresh working
directory (``/home/me/...`` and ``/srv/...`` map into it), against real processes:

- The quickstart's ``meta_gateway serve --state-dir .meta/state`` starts as written and serves the
  blocks after it; each ``meta_gateway serve`` the README shows starts as written. A port a block
  names (8765 by default) maps to one free port of this machine, the same one for every block that
  names it: a gateway started on a port another gateway of the walk listens on is refused, as a
  user's would be. Nothing is stopped unless the README's prose before a block says to stop a
  gateway: a block that needs a state dir a gateway of the walk holds is refused, as a user's is.
- ``console`` blocks run each ``$`` command (``curl`` is performed with httpx, as curl may be
  absent: the flags the README uses) and compare what it prints with what the README prints: the
  same JSON structure, keys and text, ids and timestamps of the same shape; other output exactly,
  except the tokens ``meta_gateway init`` generates (same name, same shape).
- ``python`` blocks run in the working directory (URLs pointed at the walk's gateways); a fragment
  that uses names it does not define (``meta``, the host's ``user_message``, LangGraph's ``graph``,
  ...) runs beside stand-ins for them, ``meta`` being a handle on a state dir of its own.
- ``toml`` blocks load as configs, each ``"<...>"`` placeholder given a real value (a token's hash
  from a token generated here, which the later blocks that name the token use); a ``--config``
  path the README names is written from the config block it introduces.
- The ``mcpServers`` block starts the MCP server it describes and speaks MCP to it (the official
  SDK's client); the review commands release what it wrote; the JSON log line is compared with a
  real one; the state-dir listing with the state dirs the walk made; export, import and
  ``storage-copy`` (into a PostgreSQL schema of their own) run as written.
- The ``ts`` block runs in the TypeScript suite (clients/typescript/test/readme.test.ts: CI runs
  pytest before the client is built); here it is checked that that test exists and reads it.

Two things are not run: the README's ``pytest`` (this test is part of it; the command is checked
to be the one CI runs) and its ``pip install``s (the test environment is that install; the
package, its entry point and each extra's distributions are checked to be installed).
"""

from __future__ import annotations

import ast
import asyncio
import builtins
import contextlib
import difflib
import fnmatch
import importlib.metadata
import inspect
import json
import os
import re
import secrets
import shlex
import signal
import subprocess
import sys
import time
import tomllib
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import anyio
import httpx
import pytest

import meta_memory
from meta_memory import Meta
from meta_memory.access.principal import hash_token
from meta_memory.client import MetaClient
from meta_memory.config import load_config_dict

from ..conftest import _postgres_schema, free_port, gateway_command

ROOT = Path(__file__).resolve().parents[2]
README = ROOT / "README.md"
TS_TEST = ROOT / "clients" / "typescript" / "test" / "readme.test.ts"
FENCE = re.compile(r"```(\w*)\n(.*?)```", re.DOTALL)
DEADLINE_S = 60.0
DEFAULT_PORT = 8765
DEFAULT_STATE_DIR = ".meta/state"
# README paths of a user's machine, mapped into the walk's temporary directory.
MAPPED_ROOTS = ("/home/me/", "/srv/")
# Prose before a block that tells the user to stop a gateway (the walk then stops the ones in the way).
STOP = re.compile(r"\bstop\b[^.]*\bgateway", re.IGNORECASE)
URL_PORT = re.compile(r"\b(127\.0\.0\.1|localhost):(\d+)")
SHELL_PROGRAMS = {"curl", "meta_gateway", "python", "export", "printf"}
# Values the README prints that differ from run to run: the same shape is what is compared.
SHAPES = {
    "a memory id": re.compile(r"mem-[0-9a-f]{11,}-[0-9a-f]{1,8}-[0-9a-f]{12}-[0-9a-f]{16}"),
    "a content hash": re.compile(r"[0-9a-f]{64}"),
    "a request id": re.compile(r"[0-9a-f]{12}"),
    "a UTC time": re.compile(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z"),
}
GENERATED_TOKEN = re.compile(r"([A-Z][A-Z0-9_]*)=([A-Za-z0-9_-]{32,})")
# What a host's agent loop has in hand, for the fragments that use it.
STAND_INS: dict[str, Any] = {
    "user_message": "who approves a production deploy?",
    "llm_tool_call_arguments": {"action": "remember", "title": "Deploys", "body": "Ops approves deploys."},
}
# Each extra the README installs, and modules of it that must import.
EXTRA_MODULES = {"semantic": ["numpy", "usearch"], "postgres": ["psycopg", "psycopg_pool"]}
# A mem0 ``Memory.get_all()`` file (docs/export-import.md#mem0-exports), for the import of one.
MEM0_GET_ALL = {
    "results": [
        {
            "id": "7f1c2a9e-1d2b-4c3d-8e4f-5a6b7c8d9e0f",
            "memory": "Prefers tea to coffee in the afternoon",
            "hash": "0c7d1b1b0c7d1b1b0c7d1b1b0c7d1b1b",
            "metadata": None,
            "created_at": "2024-07-20T01:30:36.275141-07:00",
            "updated_at": "2024-07-20T01:30:36.275172-07:00",
            "user_id": "alice",
        },
        {
            "id": "0e9d8c7b-6a5f-4e3d-2c1b-0a9f8e7d6c5b",
            "memory": "Works from the Zurich office on Tuesdays",
            "created_at": "2024-07-22T14:00:00.000000-07:00",
            "user_id": "bob",
        },
    ]
}


@dataclass
class Block:
    lang: str
    text: str
    line: int  # the README line of the opening fence
    prose: str  # the README text between the previous block and this one

    @property
    def where(self) -> str:
        return f"README block at line {self.line}"


def readme_blocks(text: str) -> list[Block]:
    blocks, end = [], 0
    for match in FENCE.finditer(text):
        line = text.count("\n", 0, match.start()) + 1
        blocks.append(Block(match.group(1), match.group(2), line, text[end : match.start()]))
        end = match.end()
    return blocks


@dataclass
class Gateway:
    """A ``meta_gateway serve`` the walk started (as the README's block at ``line`` says)."""

    line: int
    command: str
    proc: subprocess.Popen[bytes]
    state_dir: Path
    vport: int  # the port the README names
    port: int  # the port it listens on here
    log_path: Path

    def running(self) -> bool:
        return self.proc.poll() is None

    def log(self) -> str:
        return self.log_path.read_text(errors="replace")

    def stop(self) -> None:
        """Ctrl-C, as the user stops it; killed if it does not end."""
        if self.running():
            self.proc.send_signal(signal.SIGINT)
        try:
            self.proc.wait(timeout=30)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait(timeout=30)


@dataclass
class Ran:
    argv: list[str]
    returncode: int
    stdout: str
    stderr: str

    @property
    def terminal(self) -> str:
        """What a terminal shows: the output, then the messages on stderr."""
        return self.stdout + self.stderr


@dataclass
class Walk:
    """The machine the README's reader works on: directories, environment, running gateways."""

    tmp: Path
    stack: contextlib.ExitStack
    env: dict[str, str] = field(default_factory=dict)  # what the user exported
    values: dict[str, str] = field(default_factory=dict)  # placeholders' values ("<...>", "mem-...")
    ports: dict[int, int] = field(default_factory=dict)  # README port -> this machine's port
    gateways: list[Gateway] = field(default_factory=list)
    configs: list[tuple[Block, str]] = field(default_factory=list)  # TOML blocks, placeholders filled
    held: dict[str, str] = field(default_factory=dict)  # what the MCP server wrote, held for review
    served_metrics: Gateway | None = None

    @property
    def work(self) -> Path:
        return self.tmp / "work"

    # -- mapping the README's machine onto this one -----------------------------------------------

    def port(self, vport: int) -> int:
        if vport not in self.ports:
            self.ports[vport] = free_port()
        return self.ports[vport]

    def map_urls(self, text: str) -> str:
        return URL_PORT.sub(lambda m: f"{m.group(1)}:{self.port(int(m.group(2)))}", text)

    def map_path(self, arg: str) -> str:
        for root in MAPPED_ROOTS:
            if arg.startswith(root):
                return str(self.tmp / arg.lstrip("/"))
        return arg

    def resolve(self, path: str) -> Path:
        return (self.work / self.map_path(path)).resolve()

    def token(self, name: str) -> str:
        """The value of a token placeholder (``<the reviewer's token>``), generated once."""
        return self.values.setdefault(name, secrets.token_urlsafe(32))

    def fill(self, placeholder: str, block: Block) -> str:
        if placeholder in self.values:
            return self.values[placeholder]
        if (hashed := re.fullmatch(r"<the hash of (.+)>", placeholder)) is not None:
            return hash_token(self.token(f"<{hashed.group(1)}>"))
        if placeholder.endswith("token>"):
            return self.token(placeholder)
        pytest.fail(f"{block.where}: no value for the placeholder {placeholder}: add one to the walk")

    def fill_text(self, text: str, block: Block) -> str:
        text = text.replace("mem-...", self.values.get("mem-...", "mem-..."))
        return re.sub(r"<[^<>\n]+>", lambda m: self.fill(m.group(0), block), text)

    def gateway_at(self, port: int) -> Gateway | None:
        return next((g for g in self.gateways if g.running() and g.port == port), None)

    # -- running commands -----------------------------------------------------------------------

    def stop_if_told(self, block: Block) -> None:
        """When the prose before ``block`` says to stop a gateway, stop the walk's gateways that
        hold a state dir the block names, or (if it starts a gateway) the port it needs."""
        if not STOP.search(block.prose):
            return
        dirs = {self.resolve(d) for d in re.findall(r"--state-dir (\S+)", block.text)}
        ports = set()
        if "meta_gateway serve" in block.text:
            ports = {int(p) for p in re.findall(r"--port (\d+)", block.text)} or {DEFAULT_PORT}
        for gateway in self.gateways:
            if gateway.running() and (gateway.state_dir in dirs or gateway.vport in ports):
                gateway.stop()

    def serve(self, line: int, argv: list[str], extra: tuple[str, ...] = ()) -> Gateway:
        """Start ``meta_gateway serve ...`` as the README writes it (its port mapped) and wait until
        it answers; fail with what it printed if it is refused."""
        args, vport, state_dir = [], DEFAULT_PORT, DEFAULT_STATE_DIR
        rest = iter(argv[1:])
        for arg in rest:
            if arg == "--port":
                vport = int(next(rest))
                continue
            if arg == "--state-dir":
                state_dir = next(rest)
                args += [arg, self.map_path(state_dir)]
                continue
            args.append(self.map_path(arg))
        self.write_named_config(line, args)
        port = self.port(vport)
        holder = next((g for g in self.gateways if g.running() and g.vport == vport), None)
        log_path = self.tmp / f"gateway-line-{line}.log"
        command = shlex.join(argv)
        with log_path.open("wb") as log:
            proc = subprocess.Popen(
                [gateway_command(), *args, "--port", str(port), *extra],
                cwd=self.work,
                stdin=subprocess.DEVNULL,
                stdout=log,
                stderr=log,
                env={**os.environ, **self.env},
            )
        gateway = Gateway(line, command, proc, self.resolve(state_dir), vport, port, log_path)
        self.gateways.append(gateway)
        deadline = time.monotonic() + DEADLINE_S
        while time.monotonic() < deadline:
            if proc.poll() is not None:
                in_the_way = (
                    f" (the gateway of README line {holder.line} listens on port {vport})" if holder else ""
                )
                pytest.fail(
                    f"README line {line}: `{command}` exited with status {proc.returncode} before "
                    f"serving{in_the_way}; a user sees:\n{gateway.log().replace(f':{port} ', f':{vport} ')}"
                )
            if holder is None:  # else: the port answers for the other one; this one must exit
                with contextlib.suppress(httpx.HTTPError):
                    if httpx.get(f"http://127.0.0.1:{port}/v1/health", timeout=2).status_code == 200:
                        return gateway
            time.sleep(0.1)
        pytest.fail(f"README line {line}: `{command}` did not serve within {DEADLINE_S}s:\n{gateway.log()}")

    def write_named_config(self, line: int, args: list[str]) -> None:
        """A ``--config`` file the user was told to write: the config block whose prose names it."""
        if "--config" not in args:
            return
        path = Path(args[args.index("--config") + 1])
        if (self.work / path).exists():
            return
        readme_path = str(path)
        if path.is_relative_to(self.tmp):  # back to the README's spelling: /home/me/...
            readme_path = "/" + str(path.relative_to(self.tmp))
        named = [(b, text) for b, text in self.configs if f"`{readme_path}`" in b.prose]
        assert named, (
            f"README line {line}: --config {readme_path}: no config block before it says it is that file"
        )
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(named[-1][1])

    def run(self, line: int, command: str, *, extra_serve_args: tuple[str, ...] = ()) -> Ran | Gateway:
        """One shell command line as the README writes it: ``export``, leading ``NAME=value``
        assignments, ``printf %s X | cmd``, ``cmd | grep 'pattern'``; the programs ``curl``,
        ``meta_gateway`` and ``python``. A ``meta_gateway serve`` starts in the background."""
        raw = re.sub(r"\$\{?([A-Z_][A-Z0-9_]*)\}?", lambda m: self.expand(line, m.group(1)), command)
        lexer = shlex.shlex(raw, posix=True, punctuation_chars="|&;")
        lexer.whitespace_split = True
        tokens = list(lexer)
        assert not set(tokens) & {"&&", ";", "&", "||"}, f"README line {line}: `{command}`: add a handler"
        segments: list[list[str]] = [[]]
        for token in tokens:
            if token == "|":
                segments.append([])
            else:
                segments[-1].append(token)
        stdin: str | None = None
        if segments[0][:2] == ["printf", "%s"] and len(segments) > 1:
            stdin = " ".join(segments.pop(0)[2:])
        pattern: str | None = None
        if segments[-1][:1] == ["grep"] and len(segments) > 1:
            pattern = segments.pop()[1]
        assert len(segments) == 1, f"README line {line}: `{command}`: a pipeline this test cannot run"
        argv = segments[0]
        assignments: dict[str, str] = {}
        while argv and re.fullmatch(r"[A-Z_][A-Z0-9_]*=.*", argv[0]):
            name, _, value = argv.pop(0).partition("=")
            assignments[name] = value
        if argv[0] == "export":
            for assignment in argv[1:]:
                name, _, value = assignment.partition("=")
                self.env[name] = value
            return Ran(argv, 0, "", "")
        if argv[0] == "curl":
            ran = self.curl(line, argv)
        elif argv[:2] == ["meta_gateway", "serve"]:
            return self.serve(line, argv, extra_serve_args)
        elif argv[0] in ("meta_gateway", "python"):
            program = gateway_command() if argv[0] == "meta_gateway" else sys.executable
            args = [self.map_urls(self.map_path(a)) for a in argv[1:]]
            if argv[0] == "python" and not (self.work / args[0]).exists() and (ROOT / args[0]).exists():
                args[0] = str(ROOT / args[0])  # the README's reader is in the clone
            done = subprocess.run(
                [program, *args],
                cwd=self.work,
                input=stdin,
                capture_output=True,
                text=True,
                timeout=DEADLINE_S,
                env={**os.environ, **self.env, **assignments},
            )
            ran = Ran(argv, done.returncode, done.stdout, done.stderr)
        else:
            pytest.fail(f"README line {line}: `{command}`: the program {argv[0]!r} has no handler")
        if pattern is not None:
            kept = [text for text in ran.stdout.splitlines() if re.search(pattern, text)]
            ran = Ran(argv, ran.returncode, "".join(f"{text}\n" for text in kept), ran.stderr)
        return ran

    def expand(self, line: int, name: str) -> str:
        if name not in self.env:
            pytest.fail(f"README line {line}: ${name} is used before anything sets it")
        return self.env[name]

    def curl(self, line: int, argv: list[str]) -> Ran:
        """``curl`` with the flags the README uses: ``-s``, ``-H NAME: VALUE``, ``-d DATA``, URL."""
        headers: dict[str, str] = {}
        data: str | None = None
        url = ""
        rest = iter(argv[1:])
        for arg in rest:
            if arg == "-s":
                continue
            if arg == "-H":
                name, _, value = next(rest).partition(":")
                headers[name.strip()] = value.strip()
            elif arg == "-d":
                data = next(rest)
                headers.setdefault("Content-Type", "application/x-www-form-urlencoded")  # as curl does
            elif arg.startswith("-"):
                pytest.fail(f"README line {line}: curl {arg} has no handler in this test")
            else:
                url = self.map_urls(arg if "://" in arg else f"http://{arg}")
        response = httpx.request(
            "POST" if data is not None else "GET", url, headers=headers, content=data, timeout=DEADLINE_S
        )
        port = httpx.URL(url).port
        if url.endswith("/metrics") and port is not None:
            self.served_metrics = self.gateway_at(port)
        return Ran(argv, 0, response.text, "")


# -- comparing what a command prints with what the README prints -------------------------------------


def shape(value: Any, key: str) -> str | None:
    if isinstance(value, str):
        return next((name for name, regex in SHAPES.items() if regex.fullmatch(value)), None)
    if isinstance(value, int) and key.endswith("_ms") and 10**12 <= value < 10**13:
        return "a time in Unix ms"
    if isinstance(value, float) and key.endswith("_ms"):
        return "a duration in ms"
    return None


def json_differences(expected: Any, actual: Any, where: str, seen: dict[str, Any]) -> list[str]:
    """Where ``actual`` differs from what the README prints, as a user would notice: structure,
    keys (in order), text; a volatile value (id, time) must have the same shape, and stand for the
    same value wherever the README repeats it."""
    if isinstance(expected, dict) and isinstance(actual, dict):
        if list(expected) != list(actual):
            return [f"{where}: the README shows the keys {list(expected)}, the reply has {list(actual)}"]
        return [d for k in expected for d in json_differences(expected[k], actual[k], f"{where}.{k}", seen)]
    if isinstance(expected, list) and isinstance(actual, list):
        if len(expected) != len(actual):
            return [f"{where}: the README shows {len(expected)} items, the reply has {len(actual)}"]
        return [
            d
            for i, (e, a) in enumerate(zip(expected, actual, strict=True))
            for d in json_differences(e, a, f"{where}[{i}]", seen)
        ]
    key = where.rsplit(".", 1)[-1]
    kind = shape(expected, key)
    if kind is not None:
        if shape(actual, key) != kind:
            return [f"{where}: the README shows {expected!r} ({kind}), the reply has {actual!r}"]
        if seen.setdefault(json.dumps(expected), actual) != actual:
            return [
                f"{where}: the README repeats {expected!r}, the reply does not repeat {seen[json.dumps(expected)]!r}"
            ]
        return []
    if type(expected) is not type(actual) or expected != actual:
        kind = shape(actual, key)
        like = f" ({kind}: the README's is not shaped like one)" if kind is not None else ""
        return [f"{where}: the README shows {expected!r}, the reply has {actual!r}{like}"]
    return []


def compare_output(line: int, command: str, expected: list[str], ran: Ran) -> None:
    if not expected:
        return
    actual = ran.terminal.splitlines()
    problems: list[str] = []
    if expected[0].startswith("{"):
        seen: dict[str, Any] = {}
        if len(actual) != len(expected):
            problems.append(f"the README shows {len(expected)} lines, the command printed {len(actual)}")
        for want, got in zip(expected, actual, strict=False):
            try:
                problems += json_differences(json.loads(want), json.loads(got), "$", seen)
            except json.JSONDecodeError:
                problems.append(f"the README shows JSON, the command printed {got!r}")
    else:
        same = len(actual) == len(expected)
        for want, got in zip(expected, actual, strict=False):
            token = GENERATED_TOKEN.fullmatch(want)
            if token is not None:  # a token the command generates: the same name and shape
                got_token = GENERATED_TOKEN.fullmatch(got)
                same = same and got_token is not None and got_token.group(1) == token.group(1)
                same = same and got_token is not None and len(got_token.group(2)) == len(token.group(2))
            else:
                same = same and want == got
        if not same:
            problems.append(
                "\n".join(difflib.unified_diff(expected, actual, "README", "printed", lineterm=""))
            )
    if problems:
        pytest.fail(
            f"README line {line}: `{command}` prints what the README does not show:\n" + "\n".join(problems)
        )


# -- the handlers, one per kind of block ------------------------------------------------------------


def console_commands(block: Block) -> list[tuple[int, str, list[str]]]:
    """The block's ``$`` commands: (README line, command, the lines the README shows it printing)."""
    commands: list[tuple[int, str, list[str]]] = []
    for offset, text in enumerate(block.text.splitlines()):
        if text.startswith("$ "):
            commands.append((block.line + 1 + offset, text[2:], []))
        else:
            commands[-1][2].append(text)
    return commands


def program(command: str) -> str:
    words = [w for w in command.split() if not re.fullmatch(r"[A-Z_][A-Z0-9_]*=\S*", w)]
    return words[0] if words else ""


def is_console(block: Block) -> bool:
    return (
        block.lang == "console"
        and block.text.startswith("$ ")
        and all(program(command) in SHELL_PROGRAMS for _, command, _ in console_commands(block))
    )


def is_gateway_lines(block: Block) -> bool:
    lines = block.text.splitlines()
    return block.lang == "sh" and bool(lines) and all(program(text) == "meta_gateway" for text in lines)


def quickstart(walk: Walk, block: Block) -> None:
    install, _, serve = block.text.strip().partition(" && ")
    assert install == "pip install .", block.where
    # The install is this test environment's: the package of this tree, its script installed.
    assert importlib.metadata.version("meta-memory") == meta_memory.__version__
    [script] = [
        ep
        for ep in importlib.metadata.distribution("meta-memory").entry_points
        if ep.group == "console_scripts" and ep.name == "meta_gateway"
    ]
    assert script.value == "meta_memory.cli:main"
    version = subprocess.run(
        [gateway_command(), "--version"], capture_output=True, text=True, timeout=DEADLINE_S
    )
    assert meta_memory.__version__ in version.stdout, version
    walk.run(block.line + 1, serve)


def whole_suite(walk: Walk, block: Block) -> None:
    """Not run (this test is part of it): the README's command is the one CI runs."""
    ci = (ROOT / ".ci" / "run").read_text()
    assert re.search(r"^python3 -m pip install (--quiet )?-e '\.\[test\]'$", ci, re.M), (
        ".ci/run installs '.[test]'"
    )
    assert re.search(r"^python3 -m pytest\b", ci, re.M), ".ci/run runs the README's pytest"


def extra(walk: Walk, block: Block) -> None:
    """Not run (the test environment is the install): the extra exists, its distributions are
    installed and its modules import."""
    name = re.fullmatch(r"pip install '\.\[([\w-]+)\]'\n", block.text).group(1)  # type: ignore[union-attr]
    pyproject = tomllib.loads((ROOT / "pyproject.toml").read_text())
    assert name in pyproject["project"]["optional-dependencies"], f"{block.where}: no extra {name!r}"
    for requirement in pyproject["project"]["optional-dependencies"][name]:
        distribution = re.match(r"[A-Za-z0-9_.-]+", requirement).group(0)  # type: ignore[union-attr]
        importlib.metadata.version(distribution)  # raises PackageNotFoundError when absent
    assert name in EXTRA_MODULES, f"{block.where}: add the modules of the extra {name!r} to EXTRA_MODULES"
    imports = "; ".join(f"import {module}" for module in EXTRA_MODULES[name])
    subprocess.run([sys.executable, "-c", imports], check=True, timeout=DEADLINE_S)


def gateway_lines(walk: Walk, block: Block) -> None:
    walk.stop_if_told(block)
    for offset, command in enumerate(block.text.splitlines()):
        line = block.line + 1 + offset
        words = shlex.split(command, comments=True)
        while re.fullmatch(r"[A-Z_][A-Z0-9_]*=.*", words[0]):
            words.pop(0)
        if words[1:2] == ["import"] and not (walk.work / words[2]).exists():
            # A file the user brings: a mem0 Memory.get_all() export, as the prose says.
            assert "mem0" in words[2] and "Memory.get_all()" in block.prose, (
                f"README line {line}: {words[2]}?"
            )
            (walk.work / words[2]).write_text(json.dumps(MEM0_GET_ALL, indent=2))
        if "META_POSTGRES_DSN" in command and "META_POSTGRES_DSN" not in walk.env:
            # The PostgreSQL the previous section configured: a schema of this test's own.
            schema = contextlib.contextmanager(_postgres_schema)
            walk.env["META_POSTGRES_DSN"] = walk.stack.enter_context(schema())
        ran = walk.run(line, command)
        if isinstance(ran, Gateway):
            continue
        assert ran.returncode == 0, (
            f"README line {line}: `{command}` exited {ran.returncode}; a user sees:\n{ran.terminal}"
        )
        if words[1:2] == ["import"]:
            assert re.search(r"^imported (\d+), skipped 0, refused 0 of \1 records in ", ran.stdout, re.M), (
                ran.terminal
            )
            assert not ran.stdout.startswith("imported 0,"), ran.terminal
        if words[1:2] == ["storage-copy"]:
            assert "copied" in ran.stdout and "refused" not in ran.terminal, ran.terminal


def console(walk: Walk, block: Block) -> None:
    walk.stop_if_told(block)
    for line, command, expected in console_commands(block):
        filled = walk.fill_text(command, block)
        ran = walk.run(line, filled)
        assert isinstance(ran, Ran), f"README line {line}: a console block starts no gateway"
        words = shlex.split(filled, comments=True)
        assert ran.returncode == 0, (
            f"README line {line}: `{command}` exited {ran.returncode}; a user sees:\n{ran.terminal}"
        )
        compare_output(line, command, expected, ran)
        if words[:2] == ["meta_gateway", "init"]:
            after_init(walk, block, line, ran)
        if words[:3] == ["meta_gateway", "review", "list"]:
            ids = re.findall(r"\bmem-[0-9a-f]+(?:-[0-9a-f]+)+", ran.stdout)
            assert walk.held.get("memory_id") in ids, (
                f"README line {line}: the record the MCP server wrote is not listed:\n{ran.terminal}"
            )
            walk.values["mem-..."] = walk.held["memory_id"]
        if words[:3] == ["meta_gateway", "review", "show"]:
            found = re.search(r"^content_hash\s+([0-9a-f]{64})$", ran.stdout, re.M)
            assert found, f"README line {line}: `review show` prints no content_hash:\n{ran.terminal}"
            walk.values["<content_hash>"] = found.group(1)
        if words[:3] == ["meta_gateway", "review", "release"]:
            assert " released" in ran.stdout, ran.terminal
            released(walk, words)


def after_init(walk: Walk, block: Block, line: int, ran: Ran) -> None:
    """The user keeps the printed tokens (the variables the clients read) and starts the gateway
    as init says (with JSON logs: the README's log line is compared with one of its lines)."""
    for text in ran.stdout.splitlines():
        if (found := GENERATED_TOKEN.fullmatch(text)) is not None:
            walk.env[found.group(1)] = found.group(2)
    printed = re.search(r"^\s+(meta_gateway serve .*)$", ran.terminal, re.M)
    assert printed, f"README line {line}: init prints no command to start the gateway"
    started = walk.run(line, printed.group(1), extra_serve_args=("--log-format", "json"))
    assert isinstance(started, Gateway)


def released(walk: Walk, words: list[str]) -> None:
    """The record the MCP server wrote is recalled now: the release took."""
    url = words[words.index("--gateway") + 1]
    with MetaClient.connect(walk.map_urls(url), token=walk.values["<the MCP servers' token>"]) as client:
        hits = client.recall_agent_memory(walk.held["identity"], query_text=walk.held["title"])
    assert walk.held["title"] in [r.title for r in hits], hits


def metrics(walk: Walk, block: Block) -> None:
    """The README's metrics line counts one remember on POST /rpc: make it (with the rpc token the
    user has), then run the block."""
    [(_, command, _)] = console_commands(block)
    [url] = [w for w in shlex.split(command) if "/metrics" in w]
    rpc = walk.map_urls(f"http://{url.removesuffix('/metrics')}/rpc")
    token = walk.env.get("META_GATEWAY_TOKEN")
    answer = httpx.post(
        rpc,
        headers={"Authorization": f"Bearer {token}"} if token else {},
        json={
            "jsonrpc": "2.0",
            "id": 1,
            "method": "meta/agent_memory/remember",
            "params": {"identity": "lead:main", "title": "Deploy policy", "body": "Ops approves deploys."},
        },
        timeout=DEADLINE_S,
    )
    assert "result" in answer.json(), answer.text
    console(walk, block)


def free_names(tree: ast.AST) -> set[str]:
    """Names the block reads but never binds (nor imports, nor gets from builtins)."""
    bound, read = set(dir(builtins)), set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Name):
            (read if isinstance(node.ctx, ast.Load) else bound).add(node.id)
        elif isinstance(node, ast.alias):
            bound.add((node.asname or node.name).split(".")[0])
        elif isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            bound.add(node.name)
        elif isinstance(node, ast.arg):
            bound.add(node.arg)
    return read - bound


def stand_in(walk: Walk, name: str, block: Block, namespace: dict[str, Any]) -> Any:
    if name in STAND_INS:
        return STAND_INS[name]
    if name == "meta":  # a handle the fragment did not build: on a state dir of its own
        builder = Meta.builder().persistent_state(walk.tmp / f"fragment-{block.line}" / "state")
        return walk.stack.enter_context(builder.agent_memory().build())
    if name == "other_agent_session_key":  # another agent's session, whose messages the host delivers
        meta = namespace.get("meta") or stand_in(walk, "meta", block, namespace)
        namespace["meta"] = meta
        return meta.open_session("assistant:research").key
    if name == "graph":  # a StateGraph whose nodes take `store: BaseStore`, as the comment says
        from langgraph.graph import END, START, MessagesState, StateGraph
        from langgraph.store.base import BaseStore

        def recall(state: MessagesState, *, store: BaseStore) -> dict[str, Any]:
            store.search(("user-42",), query=str(state["messages"][-1].content))
            return {}

        graph = StateGraph(MessagesState)
        graph.add_node("recall", recall)
        graph.add_edge(START, "recall")
        graph.add_edge("recall", END)
        return graph
    pytest.fail(f"{block.where} uses {name!r}, which it does not define: add a stand-in for it")


def python(walk: Walk, block: Block) -> None:
    source = walk.map_urls(block.text)
    flags = ast.PyCF_ALLOW_TOP_LEVEL_AWAIT
    tree = compile(source, "README.md", "exec", flags=ast.PyCF_ONLY_AST | flags)
    ast.increment_lineno(tree, block.line)  # tracebacks name README lines
    namespace: dict[str, Any] = {"__name__": "readme"}
    for name in sorted(free_names(tree), key=lambda n: n == "other_agent_session_key"):
        if name not in namespace:
            namespace[name] = stand_in(walk, name, block, namespace)
    try:
        pending = eval(compile(tree, "README.md", "exec", flags=flags), namespace)
        if inspect.iscoroutine(pending):  # the block awaits at its top level
            asyncio.run(pending)
    except Exception as exc:
        pytest.fail(f"{block.where} raised {type(exc).__name__}: {exc}")
    if "hits" in namespace:
        assert namespace["hits"], f"{block.where}: its recall found nothing"
    if "page" in namespace:
        assert namespace["page"].records, f"{block.where}: its listing found nothing"
    if "memory_tool(" in block.text:  # the LLM wrote after a web fetch: stored, held for review
        assert (namespace["result"].is_error, namespace["result"].outcome) == (False, "quarantined")
    if "graph.compile(" in block.text:
        assert callable(getattr(namespace["app"], "invoke", None)), f"{block.where}: no compiled graph"


def typescript(walk: Walk, block: Block) -> None:
    """Run by the TypeScript suite (the client is built after pytest in CI): that test exists and
    reads this block, and the names it replaces are still the block's."""
    assert TS_TEST.is_file(), f"{block.where}: {TS_TEST.relative_to(ROOT)} runs it: it is missing"
    source = TS_TEST.read_text()
    assert "README.md" in source and "```ts" in source, (
        f"{TS_TEST.name} no longer reads the README's ts block"
    )
    package = json.loads((ROOT / "clients" / "typescript" / "package.json").read_text())
    assert f'from "{package["name"]}"' in block.text, f"{block.where} no longer imports {package['name']}"
    assert f'"http://127.0.0.1:{DEFAULT_PORT}"' in block.text and "records" in block.text, block.where
    for needle in ('"@meta-memory/client"', '"http://127.0.0.1:8765"', "records.length"):
        assert needle in source, f"{TS_TEST.name} no longer replaces {needle}"


def toml(walk: Walk, block: Block) -> None:
    text = re.sub(r'"(<[^">]*>)"', lambda m: json.dumps(walk.fill(m.group(1), block)), block.text)
    load_config_dict(tomllib.loads(text))
    walk.configs.append((block, text))


def mcp_servers(walk: Walk, block: Block) -> None:
    """Start the MCP server the block describes, as an MCP client would (its env only), and
    write through its memory tool: held for review under llm_writes = "quarantined"."""
    [(name, server)] = json.loads(block.text)["mcpServers"].items()
    assert server["command"] == "meta_gateway", block.where
    args = [walk.map_urls(walk.map_path(arg)) for arg in server["args"]]
    env = {"PATH": os.environ["PATH"], **{k: walk.fill_text(v, block) for k, v in server["env"].items()}}
    url = args[args.index("--gateway") + 1]
    assert walk.gateway_at(httpx.URL(url).port or 0), f"{block.where}: no gateway of the walk serves {url}"
    title = "Build cache"
    with (walk.tmp / f"mcp-{name}.log").open("w") as errlog:
        text, tools = anyio.run(speak_mcp, gateway_command(), args, env, errlog, title)
    assert "memory" in tools, tools
    assert "QUARANTINED" in text, f"{block.where}: the memory tool's write was not held for review: {text}"
    identity = args[args.index("--identity") + 1]
    walk.held = {
        "memory_id": text.removeprefix("Stored memory ").split(",")[0],
        "title": title,
        "identity": identity,
    }


async def speak_mcp(
    command: str, args: list[str], env: dict[str, str], errlog: Any, title: str
) -> tuple[str, list[str]]:
    from mcp import ClientSession, StdioServerParameters, types
    from mcp.client.stdio import stdio_client

    params = StdioServerParameters(command=command, args=args, env=env)
    with anyio.fail_after(DEADLINE_S):
        async with (
            stdio_client(params, errlog=errlog) as (read, write),
            ClientSession(read, write, read_timeout_seconds=DEADLINE_S) as session,
        ):
            await session.initialize()
            tools = [tool.name for tool in (await session.list_tools()).tools]
            result = await session.call_tool(
                "memory", {"action": "remember", "title": title, "body": "The build cache lives on nfs-2."}
            )
    assert result.is_error is False, result
    [content] = result.content
    assert isinstance(content, types.TextContent)
    return content.text, tools


def log_line(walk: Walk, block: Block) -> None:
    """The README's request log line has the keys (in order) and the kind of values of a real
    line of the same request, from the gateway that served the metrics block."""
    shown = json.loads(block.text)
    gateway = walk.served_metrics
    assert gateway is not None, f"{block.where}: no gateway of the walk served GET {shown['path']}"
    deadline = time.monotonic() + DEADLINE_S
    while True:  # a request's line is written after its reply, by the logging thread
        lines = [json.loads(text) for text in gateway.log().splitlines() if text.startswith("{")]
        real = [r for r in lines if r.get("request_id") and r.get("path") == shown["path"]]
        if real or time.monotonic() > deadline:
            break
        time.sleep(0.1)
    assert real, (
        f"{block.where}: the gateway of README line {gateway.line} logged no JSON line for {shown['path']}:\n{gateway.log()}"
    )
    logged = real[-1]
    problems = []
    if list(shown) != list(logged):
        problems.append(f"$: the README shows the keys {list(shown)}, the log line has {list(logged)}")
    else:
        plain = {k: v for k, v in shown.items() if k != "message"}
        problems += json_differences(plain, {k: logged[k] for k in plain}, "$", {})
        generic = re.compile(r"\d+(\.\d+)?|\[[0-9a-f]{12}\]")  # its figures and request id vary
        if generic.sub("#", shown["message"]) != generic.sub("#", logged["message"]):
            problems.append(
                f"$.message: the README shows {shown['message']!r}, the log has {logged['message']!r}"
            )
    assert not problems, f"{block.where}: " + "\n".join(problems)


def state_on_disk(walk: Walk, block: Block) -> None:
    """Each file the listing names exists in a state dir the walk made (the transient and the
    hybrid-only ones excepted); each file of the listed dir is one the listing names."""
    header, *rows = block.text.splitlines()
    patterns: dict[str, str] = {}
    for row in rows:
        listed_row = re.fullmatch(r"\s+((?:\S+, )*\S+)\s+(.*)", row)
        assert listed_row, f"{block.where}: {row!r} is not a file name and what it holds"
        for name in listed_row.group(1).split(", "):
            patterns[name.replace("<realm>", "*")] = listed_row.group(2)
    state_dirs = [
        Path(root)
        for root, dirs, files in os.walk(walk.tmp)
        if "event_log.sqlite3" in files or "agent-memory" in dirs or ".meta-runtime.lock" in files
    ]
    found = {str(p.relative_to(d)) for d in state_dirs for p in d.rglob("*") if p.is_file()}
    serving = {g.state_dir for g in walk.gateways if g.running()}
    for pattern, what in patterns.items():
        if pattern == "*.tmp" or ('recall = "hybrid"' in what and not fnmatch.filter(found, pattern)):
            continue  # a stage exists only while its file is rewritten; vectors only with hybrid recall
        if pattern == ".meta-runtime.lock":
            assert any((d / pattern).exists() for d in serving), f"{block.where}: no {pattern} while serving"
            continue
        assert fnmatch.filter(found, pattern), f"{block.where}: no state dir of the walk holds {pattern}"
    listed = walk.resolve(header.rstrip("/"))
    for path in listed.rglob("*"):
        name = str(path.relative_to(listed))
        if path.is_file():
            assert any(fnmatch.fnmatch(name, p) for p in patterns), (
                f"{block.where} does not name {header}{name}"
            )


HANDLERS: list[tuple[Callable[[Block], bool], Callable[[Walk, Block], None]]] = [
    (lambda b: b.lang == "sh" and b.text.startswith("pip install . && meta_gateway serve "), quickstart),
    (lambda b: b.lang == "sh" and b.text == "pip install -e '.[test]' && pytest\n", whole_suite),
    (lambda b: b.lang == "sh" and re.fullmatch(r"pip install '\.\[[\w-]+\]'\n", b.text) is not None, extra),
    (is_gateway_lines, gateway_lines),
    (lambda b: is_console(b) and any("/metrics" in c for _, c, _ in console_commands(b)), metrics),
    (is_console, console),
    (lambda b: b.lang == "python", python),
    (lambda b: b.lang == "ts", typescript),
    (lambda b: b.lang == "toml", toml),
    (lambda b: b.lang == "json" and '"mcpServers"' in b.text, mcp_servers),
    (lambda b: b.lang == "json" and '"logger"' in b.text, log_line),
    (lambda b: b.lang == "" and b.text.startswith(".meta/state/\n"), state_on_disk),
]


def handler_for(block: Block) -> Callable[[Walk, Block], None]:
    for claims, handler in HANDLERS:
        if claims(block):
            return handler
    first = block.text.splitlines()[0] if block.text else ""
    pytest.fail(f"{block.where} is not run by this test: add a handler (```{block.lang}: {first!r})")


def test_every_readme_block_has_a_handler() -> None:
    blocks = readme_blocks(README.read_text(encoding="utf-8"))
    assert len(blocks) >= 20
    for block in blocks:
        handler_for(block)


@contextlib.contextmanager
def walking(tmp_path: Path) -> Iterator[Walk]:
    with contextlib.ExitStack() as stack:
        walk = Walk(tmp_path, stack)
        walk.work.mkdir()
        try:
            yield walk
        finally:
            for gateway in walk.gateways:
                gateway.stop()


def test_every_readme_block_runs_in_order_on_one_machine(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    blocks = readme_blocks(README.read_text(encoding="utf-8"))
    with walking(tmp_path) as walk:
        monkeypatch.chdir(walk.work)
        for block in blocks:
            handler_for(block)(walk, block)
