// The few Node.js APIs this package and its tests use, declared here so that TypeScript is the
// package's only devDependency (no @types/node). `fetch`, AbortController and timers come from
// the DOM lib (Node 20 implements them). Nothing in the public API names these types.

declare namespace NodeShim {
  interface Readable {
    setEncoding(encoding: "utf8"): this;
    on(event: "data", listener: (chunk: string) => void): this;
    on(event: "end" | "close", listener: () => void): this;
    on(event: "error", listener: (err: Error) => void): this;
    ref?(): void;
    unref?(): void;
  }
  interface Writable {
    write(chunk: string, callback?: (err?: Error | null) => void): boolean;
    end(callback?: () => void): this;
    on(event: "error", listener: (err: Error) => void): this;
    destroyed: boolean;
    writableEnded: boolean;
    ref?(): void;
    unref?(): void;
  }
  interface ErrnoError extends Error {
    code?: string;
    errno?: number;
    syscall?: string;
  }
}

declare module "node:child_process" {
  interface SpawnOptions {
    stdio?: ("pipe" | "inherit" | "ignore")[];
    env?: Record<string, string | undefined>;
    cwd?: string;
  }
  interface ChildProcess {
    readonly pid: number | undefined;
    readonly stdin: NodeShim.Writable;
    readonly stdout: NodeShim.Readable;
    readonly stderr: NodeShim.Readable;
    readonly exitCode: number | null;
    readonly signalCode: string | null;
    kill(signal?: "SIGTERM" | "SIGKILL" | "SIGINT"): boolean;
    ref(): void;
    unref(): void;
    on(event: "exit" | "close", listener: (code: number | null, signal: string | null) => void): this;
    on(event: "error", listener: (err: NodeShim.ErrnoError) => void): this;
    once(event: "exit", listener: (code: number | null, signal: string | null) => void): this;
  }
  function spawn(command: string, args: readonly string[], options?: SpawnOptions): ChildProcess;
}

declare module "node:test" {
  type Fn = (t: unknown) => void | Promise<void>;
  interface TestOptions {
    timeout?: number;
    skip?: boolean | string;
    concurrency?: number | boolean;
  }
  function test(name: string, fn: Fn): Promise<void>;
  function test(name: string, options: TestOptions, fn: Fn): Promise<void>;
  function describe(name: string, fn: () => void): Promise<void>;
  function describe(name: string, options: TestOptions, fn: () => void): Promise<void>;
  function it(name: string, fn: Fn): Promise<void>;
  function it(name: string, options: TestOptions, fn: Fn): Promise<void>;
  function before(fn: () => void | Promise<void>, options?: { timeout?: number }): void;
  function after(fn: () => void | Promise<void>, options?: { timeout?: number }): void;
  export { test, describe, it, before, after };
  export default test;
}

declare module "node:assert/strict" {
  interface Assert {
    (value: unknown, message?: string): asserts value;
    ok(value: unknown, message?: string): asserts value;
    equal<T>(actual: unknown, expected: T, message?: string): asserts actual is T;
    notEqual(actual: unknown, expected: unknown, message?: string): void;
    deepEqual<T>(actual: unknown, expected: T, message?: string): asserts actual is T;
    match(value: string, regexp: RegExp, message?: string): void;
    fail(message?: string): never;
    rejects(
      block: Promise<unknown> | (() => Promise<unknown>),
      error?: ((err: unknown) => boolean) | object | (new (...args: never[]) => unknown),
      message?: string,
    ): Promise<void>;
    throws(block: () => unknown, error?: ((err: unknown) => boolean) | object, message?: string): void;
  }
  const assert: Assert;
  export default assert;
}

declare module "node:net" {
  interface Socket {
    destroy(): void;
    end(): void;
    write(data: string): boolean;
    on(event: "data", listener: (chunk: unknown) => void): this;
    on(event: "error" | "close", listener: (...args: unknown[]) => void): this;
  }
  interface Server {
    listen(port: number, host: string, callback?: () => void): this;
    address(): { port: number; address: string } | string | null;
    close(callback?: (err?: Error) => void): this;
    on(event: "error", listener: (err: Error) => void): this;
  }
  function createServer(listener?: (socket: Socket) => void): Server;
}

declare module "node:fs/promises" {
  function mkdtemp(prefix: string): Promise<string>;
  function writeFile(path: string, data: string): Promise<void>;
  function readFile(path: string, encoding: "utf8"): Promise<string>;
  function readdir(path: string): Promise<string[]>;
  function rm(path: string, options?: { recursive?: boolean; force?: boolean }): Promise<void>;
}

declare module "node:url" {
  function fileURLToPath(url: string | URL): string;
}

declare module "node:fs" {
  function readFileSync(path: string, encoding: "utf8"): string;
}

declare module "node:os" {
  function tmpdir(): string;
}

declare module "node:path" {
  function join(...parts: string[]): string;
  function dirname(path: string): string;
  const delimiter: string;
}

declare module "node:crypto" {
  interface Hash {
    update(data: string): Hash;
    digest(encoding: "hex"): string;
  }
  function createHash(algorithm: "sha256"): Hash;
}

declare const process: {
  env: Record<string, string | undefined>;
  platform: string;
  pid: number;
  kill(pid: number, signal?: string | number): boolean;
};
