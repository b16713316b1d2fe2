// Test-side helper for the fake REPL: writes a script to a temp dir and gives the shell command
// to use as LEAN_REPL_CMD, plus a reader for the fake's event log.
import { mkdtempSync, readFileSync, rmSync, writeFileSync, existsSync } from 'node:fs';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import type { FakeReplScript } from './fake-repl-rules';

export const FAKE_REPL_PATH = fileURLToPath(new URL('./fake-repl.ts', import.meta.url));
const TSX_LOADER = pathToFileURL(createRequire(import.meta.url).resolve('tsx')).href;

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
  /** Events logged so far, in order. */
  events(): FakeReplLogEvent[];
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
  const scriptFile = join(dir, 'script.json');
  const logFile = join(dir, 'events.log');
  writeFileSync(scriptFile, JSON.stringify({ stateDir: dir, ...script }));
  const command = [process.execPath, '--import', TSX_LOADER, FAKE_REPL_PATH, '--script', scriptFile, '--log', logFile]
    .map(shellQuote)
    .join(' ');
  const events = (): FakeReplLogEvent[] =>
    existsSync(logFile)
      ? readFileSync(logFile, 'utf8')
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
  return {
    command,
    logFile,
    events,
    count: (event) => events().filter((e) => e.event === event).length,
    processes: () => new Set(events().filter((e) => e.event === 'start').map((e) => e.pid)).size,
    rescript: (next) => writeFileSync(scriptFile, JSON.stringify({ stateDir: dir, ...next })),
    cleanup: () => rmSync(dir, { recursive: true, force: true }),
  };
}

function shellQuote(s: string): string {
  return `'${s.replace(/'/g, `'\\''`)}'`;
}
