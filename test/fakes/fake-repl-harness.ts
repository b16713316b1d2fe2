// Test-side helper for the fake REPL: writes a script to a temp dir and gives the shell command
// to use as LEAN_REPL_CMD, plus a reader for the fake's event log.
//
// The REPL runs in the bubblewrap sandbox by default (engines/lean/sandbox.ts), which shows it
// only the system directories: `sandbox` (for createLeanRunner) and `sandboxEnv` (for a worker
// process) add what the fake needs, read-only the node binary and the repository (tsx and the
// fake's source), writable its own directory (script, log, leak markers). The directory is
// world-writable because under a root worker the sandbox runs as uid 65534.
import { chmodSync, existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, realpathSync, rmSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import type { SandboxSettings } from '../../engines/lean/sandbox';
import type { FakeReplScript } from './fake-repl-rules';

export const FAKE_REPL_PATH = fileURLToPath(new URL('./fake-repl.ts', import.meta.url));
const TSX_LOADER = pathToFileURL(createRequire(import.meta.url).resolve('tsx')).href;
const REPO_ROOT = fileURLToPath(new URL('../..', import.meta.url));
const NODE_DIR = dirname(realpathSync(process.execPath));
// Node reserves about 10 GB of address space per WebAssembly memory and tsx makes several, so
// the fake needs more than Lean's default 32 GB (with which it starts, barely).
const FAKE_ADDRESS_SPACE_MB = 65_536;

export interface FakeReplLogEvent {
  event: string;
  pid: number;
  /** The event's details without its timing (e.g. `env=1 base=0`). */
  detail: string;
  /** When the command began and was answered (ms since the epoch), for commands. */
  began?: number;
  ended?: number;
}

export interface FakeRepl {
  /** Shell command starting the fake, for `replCmd` / LEAN_REPL_CMD. */
  command: string;
  logFile: string;
  /** The binds the fake needs inside the sandbox, for createLeanRunner's `sandbox`. */
  sandbox: Pick<SandboxSettings, 'readOnly' | 'writable' | 'maxAddressSpaceMb'>;
  /** The same as LEAN_SANDBOX_READ / LEAN_SANDBOX_WRITE, for a worker process's environment. */
  sandboxEnv: Record<string, string>;
  /** Where the fake leaves a marker per command carrying a word driftline never sends. */
  leakDir: string;
  /** The marker files' contents (the words, then the command), in the order written. */
  leaks(): string[];
  /** Events logged so far, in order. */
  events(): FakeReplLogEvent[];
  /** What each process saw at start (`env`, `limits`, `connect`, `write`, `read`), in order. */
  probes(): FakeReplLogEvent[];
  count(event: string): number;
  /** Distinct processes that started. */
  processes(): number;
  /** Replaces the script; processes started from now on read the new one. */
  rescript(script: FakeReplScript): void;
  cleanup(): void;
}

/** `node --import tsx test/fakes/fake-repl.ts --script <file> --log <file>` with absolute paths,
 * so it works from any working directory. */
export function fakeRepl(script: FakeReplScript = {}): FakeRepl {
  const dir = mkdtempSync(join(tmpdir(), 'fake-repl-'));
  chmodSync(dir, 0o777);
  const leakDir = join(dir, 'leaks');
  mkdirSync(leakDir);
  chmodSync(leakDir, 0o777);
  const scriptFile = join(dir, 'script.json');
  const logFile = join(dir, 'events.log');
  writeFileSync(scriptFile, JSON.stringify({ stateDir: dir, leakDir, ...script }));
  const readOnly = [REPO_ROOT, ...(NODE_DIR.startsWith('/usr/') ? [] : [NODE_DIR])];
  const command = [process.execPath, '--import', TSX_LOADER, FAKE_REPL_PATH, '--script', scriptFile, '--log', logFile]
    .map(shellQuote)
    .join(' ');
  const readLog = (file: string): FakeReplLogEvent[] =>
    existsSync(file)
      ? readFileSync(file, 'utf8')
          .split('\n')
          .filter(Boolean)
          .map((line) => {
            const [event = '', pidPart = '', ...rest] = line.split(' ');
            const timing = (key: string) => {
              const part = rest.find((r) => r.startsWith(`${key}=`));
              return part === undefined ? undefined : Number(part.slice(key.length + 1));
            };
            const detail = rest.filter((r) => !/^(began|ended)=/.test(r)).join(' ');
            const out: FakeReplLogEvent = { event, pid: Number(pidPart.replace('pid=', '')), detail };
            const began = timing('began');
            const ended = timing('ended');
            if (began !== undefined) out.began = began;
            if (ended !== undefined) out.ended = ended;
            return out;
          })
      : [];
  const events = () => readLog(logFile);
  return {
    command,
    logFile,
    sandbox: { readOnly, writable: [dir], maxAddressSpaceMb: FAKE_ADDRESS_SPACE_MB },
    sandboxEnv: { LEAN_SANDBOX_READ: readOnly.join(','), LEAN_SANDBOX_WRITE: dir, LEAN_MAX_AS_MB: String(FAKE_ADDRESS_SPACE_MB) },
    leakDir,
    leaks: () =>
      readdirSync(leakDir)
        .map((name) => ({ name, n: Number(/-(\d+)\.txt$/.exec(name)?.[1] ?? 0) }))
        .sort((a, b) => a.n - b.n || a.name.localeCompare(b.name))
        .map(({ name }) => readFileSync(join(leakDir, name), 'utf8')),
    events,
    probes: () => readLog(`${logFile}.probes`),
    count: (event) => events().filter((e) => e.event === event).length,
    processes: () =>
      new Set(
        events()
          .filter((e) => e.event === 'start')
          .map((e) => e.pid),
      ).size,
    rescript: (next) => writeFileSync(scriptFile, JSON.stringify({ stateDir: dir, leakDir, ...next })),
    cleanup: () => rmSync(dir, { recursive: true, force: true }),
  };
}

function shellQuote(s: string): string {
  return `'${s.replace(/'/g, `'\\''`)}'`;
}
