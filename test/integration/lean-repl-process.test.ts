import { existsSync, readFileSync } from 'node:fs';
import { afterEach, describe, expect, it } from 'vitest';
import { ReplCrashedError, ReplProcess, ReplTamperedError, ReplTimeoutError } from '../../engines/lean/repl-process';
import { isErrorReply } from '../../engines/lean/repl-protocol';
import { fakeRepl, type FakeRepl } from '../fakes/fake-repl-harness';

const opened: ReplProcess[] = [];
const fakes: FakeRepl[] = [];

function start(fake: FakeRepl, tampered?: string[]): ReplProcess {
  const proc = new ReplProcess({ command: fake.command, onTamper: (t) => tampered?.push(t) });
  opened.push(proc);
  return proc;
}

function setup(script: Parameters<typeof fakeRepl>[0] = {}): FakeRepl {
  const fake = fakeRepl(script);
  fakes.push(fake);
  return fake;
}

/** Alive and not a zombie (a killed grandchild waits for init to reap it). */
function isRunning(pid: number): boolean {
  try {
    process.kill(pid, 0);
  } catch {
    return false;
  }
  const stat = existsSync(`/proc/${pid}/stat`) ? readFileSync(`/proc/${pid}/stat`, 'utf8') : '';
  return !/^\d+ \(.*\) Z/.test(stat);
}

afterEach(async () => {
  await Promise.all(opened.splice(0).map((p) => p.close(500)));
  for (const f of fakes.splice(0)) f.cleanup();
});

describe('ReplProcess', () => {
  it('sends commands and reads multi-line replies, numbering environments from 0', async () => {
    const proc = start(setup());
    const header = await proc.request({ cmd: 'import Mathlib' }, { timeoutMs: 10_000 });
    expect(header).toEqual({ env: 0 });
    const body = await proc.request({ cmd: 'theorem t : 1 = 1 := by sorry', env: 0 }, { timeoutMs: 10_000 });
    // Environment 1 is the header's confirmation (repl-process.ts).
    expect(body).toMatchObject({
      env: 2,
      messages: [{ severity: 'warning', pos: { line: 1, column: 8 }, data: "declaration uses 'sorry'" }],
      sorries: [{ goal: '⊢ 1 = 1' }],
    });
    const unknown = await proc.request({ cmd: 'theorem t : True := trivial', env: 42 }, { timeoutMs: 10_000 });
    expect(isErrorReply(unknown) && unknown.message).toBe('Unknown environment.');
  });

  it('receives a megabyte reply that arrives in many chunks', async () => {
    const proc = start(setup({ bigReplyChars: 2_000_000 }));
    const reply = await proc.request({ cmd: 'theorem t : True := by sorry -- BIG_REPLY' }, { timeoutMs: 20_000 });
    expect(!isErrorReply(reply) && reply.messages?.find((m) => m.severity === 'info')?.data.length).toBe(2_000_000);
  });

  it('follows every reply with a confirmation the REPL answers next, naming its nonce', async () => {
    const fake = setup();
    const proc = start(fake);
    await proc.request({ cmd: 'import Mathlib' }, { timeoutMs: 10_000 });
    await proc.request({ cmd: 'theorem t : 1 = 1 := by sorry', env: 0 }, { timeoutMs: 10_000 });
    expect(fake.events().map((e) => e.event)).toEqual(['start', 'header', 'confirm', 'begin', 'body', 'confirm']);
    // The environments: header 0, its confirmation 1, the statement 2 (on 0), its confirmation 3.
    expect(fake.events().map((e) => e.detail)).toContainEqual('env=2 base=0');
  });

  it('treats stray stdout output before a reply as tampering and kills the process', async () => {
    const proc = start(setup());
    const error = await proc.request({ cmd: 'theorem t : True := by sorry -- NOISE_REPL' }, { timeoutMs: 10_000 }).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(ReplTamperedError);
    expect((error as ReplTamperedError).detail).toContain('Processing incremental state');
    expect(proc.alive).toBe(false);
  });

  it('refuses a forged reply that names the environment the real one is about to get', async () => {
    const fake = setup();
    const proc = start(fake);
    await proc.request({ cmd: 'import Mathlib' }, { timeoutMs: 10_000 });
    const error = await proc
      .request({ cmd: 'theorem t : False := by sorry -- FORGE_REPL', env: 0 }, { timeoutMs: 10_000 })
      .catch((e: unknown) => e);
    expect(error).toBeInstanceOf(ReplTamperedError);
    expect(fake.count('forge')).toBe(1);
    expect(proc.alive).toBe(false);
  });

  it('refuses a forged reply that arrives alone: the real reply then comes where the confirmation was due', async () => {
    const fake = setup({ forgeGapMs: 200 });
    const proc = start(fake);
    await proc.request({ cmd: 'import Mathlib' }, { timeoutMs: 10_000 });
    const error = await proc
      .request({ cmd: 'theorem t : False := by sorry -- FORGE_REPL', env: 0 }, { timeoutMs: 10_000 })
      .catch((e: unknown) => e);
    expect(error).toBeInstanceOf(ReplTamperedError);
    expect((error as ReplTamperedError).detail).toMatch(/environment 2 where 3 was due/);
  });

  it('refuses a forged reply naming an environment out of sequence ({"env": 0})', async () => {
    const proc = start(setup({ forgedEnv: 0 }));
    await proc.request({ cmd: 'import Mathlib' }, { timeoutMs: 10_000 });
    const error = await proc
      .request({ cmd: 'theorem t : False := by sorry -- FORGE_REPL', env: 0 }, { timeoutMs: 10_000 })
      .catch((e: unknown) => e);
    expect(error).toBeInstanceOf(ReplTamperedError);
  });

  it('reports output written while no request is pending, and kills the process', async () => {
    const tampered: string[] = [];
    const fake = setup({ lingerDelayMs: 100 });
    const proc = start(fake, tampered);
    await proc.request({ cmd: 'import Mathlib' }, { timeoutMs: 10_000 });
    await expect(
      proc.request({ cmd: 'theorem t : True := by sorry -- LINGER_REPL', env: 0 }, { timeoutMs: 10_000 }),
    ).resolves.toMatchObject({
      env: 2,
    });
    await expect.poll(() => tampered.length, { timeout: 5_000 }).toBe(1);
    expect(tampered[0]).toContain('no request pending');
    expect(proc.alive).toBe(false);
    expect(proc.tampered).toBe(tampered[0]);
  });

  it('kills the whole process group and rejects with ReplTimeoutError when no reply comes in time', async () => {
    const fake = setup();
    const proc = start(fake);
    await proc.request({ cmd: 'import Mathlib' }, { timeoutMs: 10_000 });
    const error = await proc.request({ cmd: 'theorem HANG_REPL : True := sorry', env: 0 }, { timeoutMs: 300 }).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(ReplTimeoutError);
    expect(proc.alive).toBe(false);
    // The fake runs behind a shell, as the REPL runs behind `lake env`: it must be gone too.
    const replPid = fake.events().find((e) => e.event === 'hang')!.pid;
    await proc.exitedPromise();
    await expect.poll(() => isRunning(replPid), { timeout: 2_000 }).toBe(false);
  });

  it('rejects with ReplCrashedError carrying the exit code and stderr tail when the REPL dies mid-reply', async () => {
    const proc = start(setup());
    const error = await proc.request({ cmd: 'theorem CRASH_REPL : True := sorry' }, { timeoutMs: 10_000 }).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(ReplCrashedError);
    const crash = error as ReplCrashedError;
    expect(crash.exitCode).toBe(134);
    expect(crash.stderrTail).toContain('Stack overflow detected');
    await expect(proc.request({ cmd: 'x' }, { timeoutMs: 1000 })).rejects.toBeInstanceOf(ReplCrashedError);
  });

  it('reports a command that cannot start as a crash, with the shell error', async () => {
    const proc = new ReplProcess({ command: 'definitely-not-a-lean-repl-xyz' });
    opened.push(proc);
    const error = (await proc.request({ cmd: 'import Mathlib' }, { timeoutMs: 10_000 }).catch((e: unknown) => e)) as ReplCrashedError;
    expect(error).toBeInstanceOf(ReplCrashedError);
    expect(error.exitCode).toBe(127);
    expect(error.stderrTail).toMatch(/not found/);
  });

  it('rejects a second request while one is in flight', async () => {
    const proc = start(setup({ bodyDelayMs: 200 }));
    const first = proc.request({ cmd: 'theorem a : True := by sorry' }, { timeoutMs: 10_000 });
    await expect(proc.request({ cmd: 'theorem b : True := by sorry' }, { timeoutMs: 10_000 })).rejects.toThrow(/already in flight/);
    await expect(first).resolves.toMatchObject({ env: 0 });
    expect(proc.busy).toBe(false);
  });

  it('aborts a request on signal by killing the process', async () => {
    const proc = start(setup({ bodyDelayMs: 5_000 }));
    const controller = new AbortController();
    const pending = proc.request({ cmd: 'theorem a : True := by sorry' }, { timeoutMs: 10_000, signal: controller.signal });
    setTimeout(() => controller.abort(new Error('activity cancelled')), 100);
    await expect(pending).rejects.toThrow('activity cancelled');
    expect(proc.alive).toBe(false);
  });

  it('close() ends input and the REPL exits on its own', async () => {
    const fake = setup();
    const proc = start(fake);
    await proc.request({ cmd: 'import Mathlib' }, { timeoutMs: 10_000 });
    await proc.close();
    expect(proc.alive).toBe(false);
    expect(fake.events().map((e) => e.event)).toEqual(['start', 'header', 'confirm', 'exit']);
  });
});
