// Runs `temporal server start-dev` as a child process: history persisted in a file, the Web UI
// on its port, the project's search attributes registered at start.
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdirSync, openSync, readFileSync } from 'node:fs';
import { dirname } from 'node:path';
import { connectTemporal } from './temporal-connection';
import { ALL_SEARCH_ATTRIBUTE_KEYS } from '../common/search-attributes';
import { dieWithParent } from './child-guard';

export interface DevServerOptions {
  cli: string;
  port: number;
  uiPort: number;
  dbFile: string;
  namespace: string;
  ip?: string;
  logFile: string;
  /** More `start-dev` flags. */
  extraArgs?: string[];
  /** false: the dev server's own SQLite and dispatch defaults (see DEV_SERVER_TUNING). */
  tuned?: boolean;
}

/** `start-dev` settings that make the file-backed dev server cheaper per workflow task:
 * SQLite in WAL mode with synchronous=NORMAL (a commit is not fsynced: durable through a killed
 * or crashed process, only the last commits can be lost to a power cut or kernel crash), eager
 * activity dispatch (an activity scheduled by a workflow task on the same worker's queue comes
 * back in the task's reply instead of through another poll), and a transfer queue that may read
 * new tasks more than 20 times a second (its default): every workflow task an activity's result
 * schedules passes through it, and at 20 reads/s it waited ≈ 25 ms on average before a worker
 * could see it. Measured by `bench/sweep.bench.ts --parts tuning,overhead`
 * (docs/decisions/0006-dev-server-tuning.md). */
export const DEV_SERVER_TUNING = [
  '--sqlite-pragma',
  'journal_mode=wal',
  '--sqlite-pragma',
  'synchronous=normal',
  '--dynamic-config-value',
  'system.enableActivityEagerExecution=true',
  '--dynamic-config-value',
  'history.transferProcessorMaxPollRPS=1000',
];

export interface DevServer {
  address: string;
  uiUrl: string;
  process: ChildProcess;
  stop(): Promise<void>;
}

function searchAttributeFlags(): string[] {
  // Keyword is the only type we use; the CLI spells it with a capital.
  return ALL_SEARCH_ATTRIBUTE_KEYS.flatMap((key) => ['--search-attribute', `${key.name}=Keyword`]);
}

async function waitForFrontend(address: string, child: ChildProcess, timeoutMs: number): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  let lastError: unknown;
  while (Date.now() < deadline) {
    if (child.exitCode !== null) throw new Error(`the Temporal dev server exited with code ${child.exitCode}`);
    try {
      const connection = await connectTemporal({ address, connectTimeout: 1000 });
      await connection.workflowService.getSystemInfo({});
      await connection.close();
      return;
    } catch (err) {
      lastError = err;
      await new Promise((r) => setTimeout(r, 300));
    }
  }
  throw new Error(`the Temporal dev server did not answer on ${address} within ${timeoutMs} ms: ${(lastError as Error)?.message}`);
}

/** The dev server's own words on why it stopped: the last line of its log naming an error. */
function logReason(logFile: string): string | undefined {
  try {
    const lines = readFileSync(logFile, 'utf8')
      .split('\n')
      .filter((l) => /error|fatal|in use|unable|failed/i.test(l));
    const last = lines.at(-1)?.trim();
    return last ? (last.length > 400 ? `${last.slice(0, 400)}…` : last) : undefined;
  } catch {
    return undefined;
  }
}

export async function startDevServer(options: DevServerOptions): Promise<DevServer> {
  const ip = options.ip ?? '127.0.0.1';
  mkdirSync(dirname(options.dbFile), { recursive: true });
  const out = openSync(options.logFile, 'a');
  // Killed with its parent (pdeathsig), so a SIGKILLed `npm start` leaves no server behind.
  const [command, args] = dieWithParent(
    options.cli,
    [
      'server',
      'start-dev',
      '--ip',
      ip,
      '--port',
      String(options.port),
      '--ui-port',
      String(options.uiPort),
      '--db-filename',
      options.dbFile,
      '--namespace',
      options.namespace,
      '--log-level',
      'warn',
      ...searchAttributeFlags(),
      ...(options.tuned === false ? [] : DEV_SERVER_TUNING),
      ...(options.extraArgs ?? []),
    ],
    'KILL',
  );
  const child = spawn(command, args, { stdio: ['ignore', out, out] });
  const address = `${ip}:${options.port}`;
  try {
    await waitForFrontend(address, child, 60_000);
  } catch (err) {
    child.kill('SIGKILL');
    const why = logReason(options.logFile);
    throw new Error(
      `${(err as Error).message}${why ? ` (it says: ${why})` : ''}. See ${options.logFile}; is port ${options.port} or ${options.uiPort} already in use?`,
    );
  }
  return {
    address,
    uiUrl: `http://${ip}:${options.uiPort}`,
    process: child,
    stop: () =>
      new Promise<void>((resolve) => {
        if (child.exitCode !== null) return resolve();
        const timer = setTimeout(() => child.kill('SIGKILL'), 10_000);
        child.once('exit', () => {
          clearTimeout(timer);
          resolve();
        });
        child.kill('SIGTERM');
      }),
  };
}
