// The pid file of `npm start`: a stack killed outright leaves its children's pids, and the next
// start stops those still running, never a process that merely reuses a pid.
import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { cleanUpAfterDeadStack, pidFile, writeStackPids } from '../../infra/stack-pids';

const children: ChildProcess[] = [];
const dirs: string[] = [];

/** A long-running node process whose command line carries `args` (as our children's do). */
function sleeper(...args: string[]): ChildProcess {
  const child = spawn(process.execPath, ['-e', 'setInterval(() => {}, 1000)', ...args], { stdio: 'ignore' });
  children.push(child);
  return child;
}

function exited(child: ChildProcess): Promise<void> {
  return child.exitCode !== null || child.signalCode !== null
    ? Promise.resolve()
    : new Promise((resolve) => child.once('exit', () => resolve()));
}

afterEach(() => {
  for (const c of children.splice(0)) c.kill('SIGKILL');
  for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
});

async function deadPid(): Promise<number> {
  const gone = spawn(process.execPath, ['-e', '0']);
  await exited(gone);
  return gone.pid!;
}

describe('cleanUpAfterDeadStack', () => {
  it('stops the children of a stack that died, and leaves other processes alone', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'driftline-pids-'));
    dirs.push(dir);
    const server = sleeper('server', 'start-dev', '--port', '1');
    const worker = sleeper('worker', '--queue', 'main');
    const stranger = sleeper('something', 'else');
    writeStackPids(dir, {
      stack: await deadPid(),
      children: [
        { pid: server.pid!, role: 'temporal dev server' },
        { pid: worker.pid!, role: 'main worker' },
        // The pid file says "lean worker", but this pid now belongs to another program.
        { pid: stranger.pid!, role: 'lean worker' },
      ],
    });
    const result = await cleanUpAfterDeadStack(dir);
    expect(result).toEqual({ stopped: [`temporal dev server (pid ${server.pid})`, `main worker (pid ${worker.pid})`] });
    await Promise.all([exited(server), exited(worker)]);
    expect(stranger.exitCode).toBeNull();
    expect(existsSync(pidFile(dir))).toBe(false);
  });

  it('refuses to touch anything while the stack that wrote the file still runs', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'driftline-pids-'));
    dirs.push(dir);
    const stack = sleeper('infra/start.ts');
    const server = sleeper('server', 'start-dev');
    writeStackPids(dir, { stack: stack.pid!, children: [{ pid: server.pid!, role: 'temporal dev server' }] });
    expect(await cleanUpAfterDeadStack(dir)).toEqual({ running: stack.pid });
    expect(server.exitCode).toBeNull();
  });
});
