"""One version number: the package's, the CLI's, ``rpc.discover``'s and the TypeScript client's."""

from __future__ import annotations

import importlib.metadata
import json
import re
import subprocess
import sys
from pathlib import Path

import meta_memory
from meta_memory import Meta

ROOT = Path(__file__).resolve().parent.parent
TYPESCRIPT = ROOT / "clients" / "typescript"


def test_the_installed_distribution_carries_the_package_version() -> None:
    assert importlib.metadata.version("meta-memory") == meta_memory.__version__


def test_meta_gateway_version_prints_the_package_version() -> None:
    gateway = Path(sys.executable).with_name("meta_gateway")
    done = subprocess.run([str(gateway), "--version"], capture_output=True, text=True, check=True, timeout=60)
    assert done.stdout.strip() == f"meta_gateway, version {meta_memory.__version__}"


def test_rpc_discover_reports_the_package_version(tmp_path: Path) -> None:
    with Meta.builder().persistent_state(tmp_path / "state").build() as meta:
        assert meta.call("rpc.discover")["info"]["version"] == meta_memory.__version__


def test_the_typescript_package_and_its_version_constant_carry_the_package_version() -> None:
    package = json.loads((TYPESCRIPT / "package.json").read_text(encoding="utf-8"))
    lock = json.loads((TYPESCRIPT / "package-lock.json").read_text(encoding="utf-8"))
    constant = re.search(
        r'^export const VERSION = "([^"]+)";$',
        (TYPESCRIPT / "src" / "version.ts").read_text(encoding="utf-8"),
        re.MULTILINE,
    )
    assert constant is not None
    assert [package["version"], lock["version"], constant.group(1)] == [meta_memory.__version__] * 3
