// `.driftline/stack.pids`: which processes a running stack started, so a stack killed outright
// (kill -9, a crash) leaves nothing behind for long: the next start stops what is still running.
import { existsSync, readFileSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';

export interface StackPids {
  /** The `npm start` process. */
  stack: number;
  children: { pid: number; role: string }[];
}

export function pidFile(dataDir: string): string {
  return join(dataDir, 'stack.pids');
}

export function writeStackPids(dataDir: string, pids: StackPids): void {
  const file = pidFile(dataDir);
  writeFileSync(`${file}.tmp`, JSON.stringify(pids));
  renameSync(`${file}.tmp`, file);
}

export function removeStackPids(dataDir: string): void {
  rmSync(pidFile(dataDir), { force: true });
}

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (err) {
    return (err as NodeJS.ErrnoException).code === 'EPERM';
  }
}

function commandLine(pid: number): string {
  try {
    return readFileSync(`/proc/${pid}/cmdline`, 'utf8').replace(/\0/g, ' ');
  } catch {
    return '';
  }
}

/** What a child of ours looks like, so a pid reused by another program is never touched. */
const LOOKS_LIKE: Record<string, RegExp> = {
  'temporal dev server': /\bserver start-dev\b/,
  'main worker': /\bworker --queue main\b/,
  'lean worker': /\bworker --queue lean\b/,
};

export type CleanupResult = { running: number } | { stopped: string[] };

/**
 * Reads the pid file a previous stack left. If that stack still runs, says so; if it died
 * without stopping its children, stops the ones still running (SIGTERM, then SIGKILL).
 */
export async function cleanUpAfterDeadStack(dataDir: string): Promise<CleanupResult> {
  const file = pidFile(dataDir);
  if (!existsSync(file)) return { stopped: [] };
  let pids: StackPids;
  try {
    pids = JSON.parse(readFileSync(file, 'utf8')) as StackPids;
  } catch {
    rmSync(file, { force: true });
    return { stopped: [] };
  }
  if (pids.stack !== process.pid && alive(pids.stack) && /infra\/start|driftline(\.js)? start|\bstart\b/.test(commandLine(pids.stack))) {
    return { running: pids.stack };
  }
  const leftovers = pids.children.filter((c) => alive(c.pid) && (LOOKS_LIKE[c.role]?.test(commandLine(c.pid)) ?? false));
  for (const c of leftovers) process.kill(c.pid, 'SIGTERM');
  const deadline = Date.now() + 10_000;
  while (leftovers.some((c) => alive(c.pid)) && Date.now() < deadline) await new Promise((r) => setTimeout(r, 200));
  for (const c of leftovers) if (alive(c.pid)) process.kill(c.pid, 'SIGKILL');
  rmSync(file, { force: true });
  return { stopped: leftovers.map((c) => `${c.role} (pid ${c.pid})`) };
}
