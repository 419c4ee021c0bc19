"""Build the release artifacts and use them as a user would, each in a fresh environment.

- ``python -m build``: an sdist, and a wheel built from that sdist (so a file the sdist leaves
  out fails here). Each is installed into its own new venv (dependencies from the package index,
  nothing from this checkout) and must report the version, serve the console and its assets, and
  answer a ``remember`` / ``recall`` round trip over HTTP.
- ``npm pack`` of clients/typescript: the tarball is installed into a new npm project, which
  spawns the wheel's ``meta_gateway stdio`` and talks to it.

One version number throughout: ``meta_gateway --version``, ``rpc.discover`` and the TypeScript
package must all report :data:`meta_memory.__version__` of this checkout.

Run from the repository root: ``python3 .ci/artifacts.py`` (CI runs it after the tests).
"""

from __future__ import annotations

import json
import os
import re
import shutil
import socket
import subprocess
import sys
import tempfile
import time
import urllib.request
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
LEFTOVERS = shutil.ignore_patterns(
    ".git", "*.egg-info", "build", "dist", "node_modules", "__pycache__", ".*_cache", ".hypothesis", ".meta"
)


def version_of_checkout() -> str:
    text = (ROOT / "src" / "meta_memory" / "__init__.py").read_text(encoding="utf-8")
    match = re.search(r'^__version__ = "([^"]+)"$', text, re.MULTILINE)
    if match is None:
        raise SystemExit("src/meta_memory/__init__.py has no __version__ line")
    return match.group(1)


def run(argv: list[str], cwd: Path | None = None) -> str:
    print("$", " ".join(argv), flush=True)
    done = subprocess.run(argv, check=False, capture_output=True, text=True, cwd=cwd)
    if done.returncode != 0:
        sys.stderr.write(done.stdout[-4000:] + done.stderr[-4000:])
        raise SystemExit(f"failed ({done.returncode}): {' '.join(argv)}")
    return done.stdout


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


def rpc(url: str, method: str, params: dict[str, object] | None = None) -> object:
    body = json.dumps({"jsonrpc": "2.0", "id": 1, "method": method, "params": params or {}}).encode()
    request = urllib.request.Request(url, body, {"Content-Type": "application/json"})
    with urllib.request.urlopen(request, timeout=30) as reply:
        answer = json.load(reply)
    if "error" in answer:
        raise SystemExit(f"{method} answered an error: {answer['error']}")
    return answer["result"]


def get(url: str) -> tuple[int, str]:
    with urllib.request.urlopen(url, timeout=30) as reply:
        return reply.status, reply.read().decode("utf-8")


def check_install(artifact: Path, label: str, work: Path, version: str) -> Path:
    """Install ``artifact`` into a new venv, check what it serves; return its meta_gateway."""
    venv = work / f"venv-{label}"
    run([sys.executable, "-m", "venv", str(venv)])
    run([str(venv / "bin" / "python"), "-m", "pip", "install", "--quiet", str(artifact)])
    gateway = venv / "bin" / "meta_gateway"
    reported = run([str(gateway), "--version"]).strip()
    if not reported.endswith(f"version {version}"):
        raise SystemExit(f"{artifact.name}: meta_gateway --version says {reported!r}, expected {version}")
    # Nothing of the checkout may be what the venv imports.
    origin = run([str(venv / "bin" / "python"), "-c", "import meta_memory; print(meta_memory.__file__)"])
    if not origin.strip().startswith(str(venv)):
        raise SystemExit(f"{artifact.name}: meta_memory imported from {origin.strip()}, not the venv")

    port = free_port()
    state = work / f"state-{label}"
    server = subprocess.Popen(
        [str(gateway), "serve", "--state-dir", str(state), "--port", str(port), "--log-level", "warning"],
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
    )
    try:
        base = f"http://127.0.0.1:{port}"
        deadline = time.monotonic() + 60
        while True:
            try:
                if get(f"{base}/v1/health")[0] == 200:
                    break
            except OSError:
                pass
            if server.poll() is not None or time.monotonic() > deadline:
                raise SystemExit(
                    f"{artifact.name}: the gateway did not come up:\n{server.stdout.read() if server.stdout else ''}"
                )
            time.sleep(0.2)
        status, shell = get(f"{base}/console")
        if status != 200 or "console.js" not in shell:
            raise SystemExit(f"{artifact.name}: /console is not the console shell")
        for asset in ("console.js", "console.css", "favicon.svg"):
            status, _ = get(f"{base}/console/static/{asset}")
            if status != 200:
                raise SystemExit(f"{artifact.name}: /console/static/{asset} answered {status}")
        discovered = rpc(f"{base}/rpc", "rpc.discover")
        assert isinstance(discovered, dict)
        if discovered["info"]["version"] != version:
            raise SystemExit(f"{artifact.name}: rpc.discover says version {discovered['info']['version']}")
        rpc(
            f"{base}/rpc",
            "meta/agent_memory/remember",
            {"identity": "lead:main", "title": "Deploys", "body": "Deploys need a second approver."},
        )
        recalled = rpc(
            f"{base}/rpc",
            "meta/agent_memory/recall",
            {"identity": "lead:main", "query_text": "who approves deploys"},
        )
        assert isinstance(recalled, dict)
        titles = [record["title"] for record in recalled["records"]]
        if titles != ["Deploys"]:
            raise SystemExit(f"{artifact.name}: recall gave {titles}, expected the remembered record")
        print(f"ok: {artifact.name} installs, reports {version}, serves the console and recalls", flush=True)
    finally:
        server.terminate()
        server.wait(timeout=30)
    return gateway


NODE_CHECK = """
import { MetaClient, VERSION } from "@meta-memory/client";
import pkg from "@meta-memory/client/package.json" with { type: "json" };
const [gateway, stateDir, expected] = process.argv.slice(2);
if (pkg.version !== expected || VERSION !== expected) {
  throw new Error(`the TypeScript package reports ${pkg.version} / ${VERSION}, expected ${expected}`);
}
const client = await MetaClient.spawn({ command: gateway, stateDir });
try {
  await client.rememberAgentMemory({ identity: "lead:main", title: "Deploys", body: "Deploys need a second approver." });
  const recalled = await client.recallAgentMemory({ identity: "lead:main", queryText: "who approves deploys" });
  const titles = recalled.records.map((record) => record.title);
  if (JSON.stringify(titles) !== JSON.stringify(["Deploys"])) throw new Error(`recall gave ${titles}`);
} finally {
  await client.close();
}
console.log("ok: the npm tarball installs and talks to the wheel's gateway");
"""


def check_npm(work: Path, gateway: Path, version: str) -> None:
    client = ROOT / "clients" / "typescript"
    package = json.loads((client / "package.json").read_text(encoding="utf-8"))
    if package["version"] != version:
        raise SystemExit(f"clients/typescript/package.json says {package['version']}, the package {version}")
    packs = work / "npm"
    packs.mkdir()
    run(["npm", "pack", "--silent", "--pack-destination", str(packs)], cwd=client)
    (tarball,) = packs.glob("*.tgz")
    project = work / "node-project"
    project.mkdir()
    (project / "package.json").write_text(json.dumps({"name": "try-meta", "private": True, "type": "module"}))
    run(["npm", "install", "--no-audit", "--no-fund", "--silent", str(tarball)], cwd=project)
    (project / "check.mjs").write_text(NODE_CHECK)
    print(run(["node", "check.mjs", str(gateway), str(work / "node-state"), version], cwd=project).strip())


def main() -> None:
    version = version_of_checkout()
    work = Path(tempfile.mkdtemp(prefix="meta-artifacts-"))
    try:
        # A copy without what an install or a test run leaves behind: setuptools would otherwise
        # take the file list of a stale src/*.egg-info and ship files package-data no longer names.
        source = work / "source"
        shutil.copytree(ROOT, source, ignore=LEFTOVERS)
        dist = work / "dist"
        # Without --sdist/--wheel, build makes the sdist and then the wheel from the sdist.
        run([sys.executable, "-m", "build", "--outdir", str(dist), str(source)])
        (sdist,) = dist.glob("*.tar.gz")
        (wheel,) = dist.glob("*.whl")
        for artifact in (sdist, wheel):
            if version not in artifact.name:
                raise SystemExit(f"{artifact.name} does not carry version {version}")
        check_install(sdist, "sdist", work, version)
        gateway = check_install(wheel, "wheel", work, version)
        check_npm(work, gateway, version)
    finally:
        if os.environ.get("META_KEEP_ARTIFACTS") != "1":
            shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
