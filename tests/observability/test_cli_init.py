"""``meta_gateway init``: a commented starter config with the safe defaults that loads, keeps only
the hashes of the tokens it prints once, is never overwritten unasked, and that a real gateway
serves with those tokens."""

from __future__ import annotations

import stat
import subprocess
import tomllib
from collections.abc import Callable
from pathlib import Path

from meta_memory.access import hash_token
from meta_memory.config import load_config_dict, load_config_file

from ..conftest import gateway_command
from .conftest import DEADLINE_S, Gateway, env_without_meta, sample, samples


def _init(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [gateway_command(), "init", *args],
        capture_output=True,
        text=True,
        timeout=DEADLINE_S,
        env=env_without_meta(),
    )


def _tokens(stdout: str) -> dict[str, str]:
    pairs = dict(line.split("=", 1) for line in stdout.splitlines())
    assert pairs.keys() == {"META_GATEWAY_TOKEN", "META_CONSOLE_TOKEN"}
    return pairs


def test_init_writes_a_commented_config_that_loads_with_agent_memory_on_and_only_token_hashes(
    tmp_path: Path,
) -> None:
    state = tmp_path / "state"
    done = _init("--state-dir", str(state))
    assert done.returncode == 0, done.stderr
    tokens = _tokens(done.stdout)
    path = state / "meta.toml"
    text = path.read_text()
    assert stat.S_IMODE(path.stat().st_mode) == 0o600 and text.count("\n#") > 5
    for token in tokens.values():
        assert token not in text and token not in done.stderr
    config = load_config_file(path)
    assert config == load_config_dict(tomllib.loads(text))
    assert config.memory is not None and config.agent_memory.enabled
    assert [t.token_sha256 for t in config.rpc.auth.tokens] == [hash_token(tokens["META_GATEWAY_TOKEN"])]
    assert [t.token_sha256 for t in config.console.auth.tokens] == [hash_token(tokens["META_CONSOLE_TOKEN"])]
    assert not config.console.auth.anonymous_allowed and config.logging.format == "text"
    assert f"--config {path}" in done.stderr


def test_init_refuses_to_overwrite_a_config_unless_forced(tmp_path: Path) -> None:
    path = tmp_path / "etc" / "gateway.toml"
    assert _init("--state-dir", str(tmp_path / "state"), "--config", str(path)).returncode == 0
    before = path.read_text()
    again = _init("--state-dir", str(tmp_path / "state"), "--config", str(path))
    assert again.returncode == 2 and "--force" in again.stderr and again.stdout == ""
    assert path.read_text() == before
    forced = _init("--state-dir", str(tmp_path / "state"), "--config", str(path), "--force")
    assert forced.returncode == 0
    assert hash_token(_tokens(forced.stdout)["META_GATEWAY_TOKEN"]) in path.read_text() != before


def test_a_gateway_serving_the_init_config_accepts_exactly_the_printed_tokens(
    serve: Callable[..., Gateway], tmp_path: Path
) -> None:
    state = tmp_path / "state"
    tokens = _tokens(_init("--state-dir", str(state)).stdout)
    app, console = tokens["META_GATEWAY_TOKEN"], tokens["META_CONSOLE_TOKEN"]
    gateway = serve("--state-dir", str(state), "--config", str(state / "meta.toml"))
    remember = {"identity": "lead:main", "title": "Deploys", "body": "Deploys need ops approval."}
    assert "result" in gateway.rpc("meta/agent_memory/remember", remember, token=app)
    assert gateway.post("meta/status").status_code == 401
    assert gateway.post("meta/status", token=console).status_code == 401  # console tokens do not open /rpc
    assert "result" in gateway.rpc("meta/status", token=console, path="/console/rpc")
    with gateway.http() as http:
        assert http.get("/metrics", headers={"authorization": f"Bearer {app}"}).status_code == 401
        scraped = http.get("/metrics", headers={"authorization": f"Bearer {console}"})
    found = samples(scraped.text)
    assert (
        sample(found, "meta_requests_total", surface="rpc", method="meta/agent_memory/remember", outcome="ok")
        == 1
    )
    stderr = gateway.stop()
    assert "WARNING" not in stderr  # the starter config leaves nothing the default turns on out
