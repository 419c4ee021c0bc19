"""``meta_gateway hash-token``: the digest a ``[[console.auth.tokens]]`` entry stores."""

from __future__ import annotations

import hashlib
import subprocess
import sys
from pathlib import Path

from click.testing import CliRunner

from meta_memory.access import BearerAuthenticator, Principal
from meta_memory.cli import main
from meta_memory.config import load_config_file

TOKEN = "k3y-for.the~console"


def test_hash_token_reads_stdin_and_prints_the_lowercase_sha256_hex() -> None:
    result = CliRunner().invoke(main, ["hash-token"], input=TOKEN + "\n")
    assert result.exit_code == 0, result.output
    assert result.output == hashlib.sha256(TOKEN.encode()).hexdigest() + "\n"


def test_hash_token_takes_the_token_as_an_option_too() -> None:
    result = CliRunner().invoke(main, ["hash-token", "--token", TOKEN])
    assert (result.exit_code, result.output.strip()) == (0, hashlib.sha256(TOKEN.encode()).hexdigest())


def test_hash_token_refuses_a_token_no_client_could_send_with_exit_status_2() -> None:
    for given in ("two words\n", "\n"):
        result = CliRunner().invoke(main, ["hash-token"], input=given)
        assert result.exit_code == 2 and "console token must be non-empty" in result.output


def test_a_printed_digest_in_a_config_file_authenticates_the_token(tmp_path: Path) -> None:
    beside = Path(sys.executable).with_name("meta_gateway")
    command = (
        [str(beside)]
        if beside.is_file()
        else [sys.executable, "-c", "from meta_memory.cli import main; main()"]
    )
    done = subprocess.run(
        [*command, "hash-token"], input=TOKEN, capture_output=True, text=True, timeout=60, check=True
    )
    config_file = tmp_path / "meta.toml"
    config_file.write_text(
        f'[[console.auth.tokens]]\ntoken_sha256 = "{done.stdout.strip()}"\nsubject = "alice"\ngroups = ["ops"]\n'
    )
    auth = BearerAuthenticator.for_console(load_config_file(config_file).console)
    assert auth.authenticate(f"Bearer {TOKEN}") == Principal("alice", frozenset({"ops"}))
