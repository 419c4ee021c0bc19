/**
 * Test support: real gateways as child processes (`meta_gateway serve` on a free port, or the
 * stdio client's own child), temporary state dirs and config files, raw TCP servers that
 * misbehave on purpose, and the Python package beside the gateway (for the tests that hold the
 * client to it). The executable is `$META_GATEWAY`, else `meta_gateway` on PATH.
 */

import { spawn, type ChildProcess } from "node:child_process";
import { createHash } from "node:crypto";
import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { createServer, type Server, type Socket } from "node:net";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";

export const GATEWAY = process.env.META_GATEWAY ?? "meta_gateway";
/** The Python that has meta_memory: `$META_PYTHON`, else the `python3` beside `$META_GATEWAY`. */
export const PYTHON =
  process.env.META_PYTHON ?? (GATEWAY.includes("/") ? join(dirname(GATEWAY), "python3") : "python3");

/** What `python3 -c code` prints on stdout; rejects with its stderr when it fails. */
export function python(code: string): Promise<string> {
  return new Promise((resolve, reject) => {
    const child = spawn(PYTHON, ["-c", code], { stdio: ["ignore", "pipe", "pipe"] });
    let out = "";
    let err = "";
    child.stdout.setEncoding("utf8");
    child.stderr.setEncoding("utf8");
    child.stdout.on("data", (chunk) => (out += chunk));
    child.stderr.on("data", (chunk) => (err += chunk));
    child.on("error", (e) => reject(new Error(`could not run ${PYTHON} (set META_PYTHON): ${e.message}`)));
    child.on("close", (code) => (code === 0 ? resolve(out) : reject(new Error(`${PYTHON} exited ${code}:\n${err}`))));
  });
}

const temps: string[] = [];

export async function tempDir(): Promise<string> {
  const dir = await mkdtemp(join(tmpdir(), "meta-client-test-"));
  temps.push(dir);
  return dir;
}

export async function removeTemps(): Promise<void> {
  await Promise.all(temps.splice(0).map((dir) => rm(dir, { recursive: true, force: true })));
}

export function sha256(text: string): string {
  return createHash("sha256").update(text).digest("hex");
}

export async function writeConfig(dir: string, text: string): Promise<string> {
  const path = join(dir, "gateway.toml");
  await writeFile(path, text);
  return path;
}

function listen(server: Server): Promise<number> {
  return new Promise((resolve, reject) => {
    server.on("error", reject);
    server.listen(0, "127.0.0.1", () => {
      const address = server.address();
      if (address === null || typeof address === "string") reject(new Error("no port"));
      else resolve(address.port);
    });
  });
}

function closeServer(server: Server): Promise<void> {
  return new Promise((resolve) => server.close(() => resolve()));
}

/** A port nothing listens on (bound, then released). */
export async function freePort(): Promise<number> {
  const server = createServer();
  const port = await listen(server);
  await closeServer(server);
  return port;
}

export interface RawServer {
  url: string;
  port: number;
  /** Connections accepted so far. */
  connections: number;
  close(): Promise<void>;
}

/** A TCP server that does `behave` with each connection (never answer, hang up, send junk). */
export async function rawServer(behave: (socket: Socket) => void): Promise<RawServer> {
  const sockets: Socket[] = [];
  const state = { connections: 0 };
  const server = createServer((socket) => {
    state.connections++;
    sockets.push(socket);
    socket.on("error", () => undefined);
    behave(socket);
  });
  const port = await listen(server);
  return {
    url: `http://127.0.0.1:${port}`,
    port,
    get connections() {
      return state.connections;
    },
    async close() {
      for (const socket of sockets) socket.destroy();
      await closeServer(server);
    },
  };
}

const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));

export interface HttpGateway {
  url: string;
  port: number;
  stateDir: string;
  child: ChildProcess;
  stderr(): string;
  stop(): Promise<number | null>;
}

/** `meta_gateway serve --state-dir <tmp> --port <free> [--config FILE]`, once `/v1/health` answers. */
export async function startHttpGateway(options: { config?: string; stateDir?: string } = {}): Promise<HttpGateway> {
  const stateDir = options.stateDir ?? join(await tempDir(), "state");
  const deadline = Date.now() + 30_000;
  for (let attempt = 0; ; attempt++) {
    const port = await freePort();
    const args = [
      "serve",
      "--state-dir",
      stateDir,
      "--host",
      "127.0.0.1",
      "--port",
      String(port),
      "--log-level",
      "warning",
    ];
    if (options.config !== undefined) args.push("--config", options.config);
    const child = spawn(GATEWAY, args, { stdio: ["ignore", "ignore", "pipe"] });
    let stderr = "";
    let exit: number | null | undefined;
    let spawnError: Error | undefined;
    child.stderr.setEncoding("utf8");
    child.stderr.on("data", (chunk) => (stderr += chunk));
    child.on("error", (err) => (spawnError = err));
    const exited = new Promise<number | null>((resolve) => child.on("exit", (code) => resolve((exit = code))));
    const url = `http://127.0.0.1:${port}`;
    while (exit === undefined && spawnError === undefined && Date.now() < deadline) {
      try {
        const response = await fetch(`${url}/v1/health`);
        if (response.ok) {
          return {
            url,
            port,
            stateDir,
            child,
            stderr: () => stderr,
            async stop() {
              if (exit === undefined) child.kill("SIGTERM");
              return exited;
            },
          };
        }
      } catch {
        // not listening yet
      }
      await sleep(100);
    }
    if (spawnError !== undefined) {
      throw new Error(`could not start ${GATEWAY} (set META_GATEWAY or put it on PATH): ${spawnError.message}`);
    }
    if (exit === undefined) child.kill("SIGKILL");
    // Someone else took the port between freePort() and the bind: try another one.
    if (attempt < 3 && /address already in use/i.test(stderr)) continue;
    throw new Error(`the gateway did not start (exit ${String(exit)}):\n${stderr}`);
  }
}

/** Whether a process is still running. */
export function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}
