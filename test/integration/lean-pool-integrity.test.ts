// Verdicts that cannot be forged and checks that cannot reach another domain (decision 0017),
// through the real pool and process code against the fake REPL: a forged reply, a task left
// running that writes later, a parse error on a text the screen accepted, and trust domains.
import { afterEach, describe, expect, it } from 'vitest';
import { ReplPool, type IntegrityEvent, type ReplPoolSettings } from '../../engines/lean/repl-pool';
import { compileVerdict } from '../../common/verdict';
import type { FakeReplScript } from '../fakes/fake-repl-rules';
import { fakeRepl, type FakeRepl } from '../fakes/fake-repl-harness';

const pools: ReplPool[] = [];
const fakes: FakeRepl[] = [];

function setup(script: FakeReplScript = {}, settings: Partial<ReplPoolSettings> = {}) {
  const fake = fakeRepl(script);
  fakes.push(fake);
  const events: IntegrityEvent[] = [];
  const pool = new ReplPool({
    replCmd: fake.command,
    header: 'import Mathlib',
    timeoutMs: 10_000,
    size: 1,
    onIntegrity: (e) => events.push(e),
    ...settings,
  });
  pools.push(pool);
  return { fake, pool, events };
}

afterEach(async () => {
  await Promise.all(pools.splice(0).map((p) => p.close()));
  for (const f of fakes.splice(0)) f.cleanup();
});

/** The pid of the process that answered the last statement (its `body` event). */
function lastBodyPid(fake: FakeRepl): number {
  return fake
    .events()
    .filter((e) => e.event === 'body')
    .at(-1)!.pid;
}

describe('ReplPool: verdict integrity', () => {
  it('refuses for tampering a check whose text writes a forged reply, replaces the REPL, and the next check is right', async () => {
    const { fake, pool, events } = setup();
    await pool.warm();
    // `False` with a forged reply: were the forgery taken, this would read "compiled".
    const forged = await pool.check('theorem FORGE_REPL : False := by sorry', { domain: 'key:mallory' });
    expect(forged.status).toBe('refused');
    expect(forged.refusedBy).toBe('tampering');
    expect(compileVerdict(forged)).toMatch(/^refused for tampering: /);
    expect(fake.count('forge')).toBe(1);
    expect(events).toMatchObject([{ kind: 'tampering', domain: 'key:mallory', during: 'check' }]);
    expect(pool.stats().retired.tampering).toBe(1);

    const forgedPid = fake.events().find((e) => e.event === 'forge')!.pid;
    const next = await pool.check('theorem next_one : True := by sorry', { domain: 'key:mallory' });
    expect(next.status).toBe('ok');
    expect(next.messages.map((m) => m.text)).toEqual(["declaration uses 'sorry'"]);
    expect(lastBodyPid(fake)).not.toBe(forgedPid);
    expect(fake.processes()).toBe(2);
  });

  it('refuses a forged reply naming environment 0 the same way', async () => {
    const { pool } = setup({ forgedEnv: 0 });
    const forged = await pool.check('theorem FORGE_REPL : False := by sorry');
    expect(forged).toMatchObject({ status: 'refused', refusedBy: 'tampering' });
    await expect(pool.check('theorem fine : True := by sorry')).resolves.toMatchObject({ status: 'ok' });
  });

  it('a task left running that writes during the next check gets that check refused, and the one after is right', async () => {
    const { fake, pool, events } = setup({ bodyDelayMs: 400, lingerDelayMs: 150 });
    await pool.warm();
    const first = await pool.check('theorem LINGER_REPL : True := by sorry');
    expect(first.status).toBe('ok');
    // The lingering task writes `{"env": <next>}` while this check is in flight.
    const second = await pool.check('theorem second : 1 = 1 := by sorry');
    expect(second).toMatchObject({ status: 'refused', refusedBy: 'tampering' });
    expect(fake.count('linger')).toBe(1);
    const lingerPid = fake.events().find((e) => e.event === 'linger')!.pid;
    const third = await pool.check('theorem third : 2 = 2 := by sorry');
    expect(third.status).toBe('ok');
    expect(lastBodyPid(fake)).not.toBe(lingerPid);
    expect(events.map((e) => e.kind)).toEqual(['tampering']);
  });

  it('a task left running that writes between checks gets its REPL killed and replaced before the next check', async () => {
    const { fake, pool, events } = setup({ lingerDelayMs: 100 });
    await pool.warm();
    expect((await pool.check('theorem LINGER_REPL : True := by sorry', { domain: 'predictions:p1' })).status).toBe('ok');
    await expect.poll(() => events.length, { timeout: 5_000 }).toBe(1);
    expect(events[0]).toMatchObject({ kind: 'tampering', during: 'idle', domain: 'predictions:p1' });
    const lingerPid = fake.events().find((e) => e.event === 'linger')!.pid;
    const next = await pool.check('theorem after : True := by sorry', { domain: 'predictions:p1' });
    expect(next.status).toBe('ok');
    expect(lastBodyPid(fake)).not.toBe(lingerPid);
    expect(pool.stats().retired.tampering).toBe(1);
  });

  it('refuses a check when Lean reports a parse error on a text the screen accepted, and recycles the REPL', async () => {
    const { fake, pool, events } = setup({
      diagnostics: [{ pattern: 'parse_me', message: "unexpected token '='; expected term" }],
    });
    await pool.warm();
    const result = await pool.check('theorem parse_me : True := by sorry');
    expect(result).toMatchObject({ status: 'refused', refusedBy: 'disagreement' });
    expect(result.messages[0]!.text).toContain("unexpected token '='");
    expect(result.messages[0]).toMatchObject({ line: 1, column: 8 });
    expect(events).toMatchObject([{ kind: 'disagreement', during: 'check' }]);
    expect(pool.stats().retired.disagreement).toBe(1);
    const pid = fake.events().filter((e) => e.event === 'body')[0]!.pid;
    // An elaboration error is Lean's verdict, not a disagreement.
    const typeError = await pool.check('theorem ok_text : True := by sorry');
    expect(typeError.status).toBe('ok');
    expect(lastBodyPid(fake)).not.toBe(pid);
  });
});

describe('ReplPool: trust domains', () => {
  it('never runs two domains on one process: a check of another domain gets a fresh process', async () => {
    const { fake, pool } = setup();
    await pool.warm();
    await pool.check('theorem a1 : True := by sorry', { domain: 'key:alice' });
    const alicePid = lastBodyPid(fake);
    await pool.check('theorem a2 : True := by sorry', { domain: 'key:alice' });
    expect(lastBodyPid(fake)).toBe(alicePid);
    await pool.check('theorem b1 : True := by sorry', { domain: 'key:bob' });
    const bobPid = lastBodyPid(fake);
    expect(bobPid).not.toBe(alicePid);
    await pool.check('theorem a3 : True := by sorry', { domain: 'key:alice' });
    expect(lastBodyPid(fake)).not.toBe(alicePid);
    expect(lastBodyPid(fake)).not.toBe(bobPid);
    expect(pool.stats().retired.domain).toBe(2);
  });

  it('takes clean warm processes first and keeps each domain on its own', async () => {
    const { fake, pool } = setup({}, { size: 3 });
    await pool.warm();
    for (const round of [1, 2, 3]) {
      for (const d of ['alice', 'bob', 'carol']) await pool.check(`theorem ${d}_${round} : True := by sorry`, { domain: `key:${d}` });
    }
    const bodies = fake.events().filter((e) => e.event === 'body');
    const pidOf = (d: string) => new Set(bodies.filter((_, i) => ['alice', 'bob', 'carol'][i % 3] === d).map((e) => e.pid));
    for (const d of ['alice', 'bob', 'carol']) expect(pidOf(d).size).toBe(1);
    expect(new Set(bodies.map((e) => e.pid)).size).toBe(3);
    expect(pool.stats().retired.domain).toBe(0);
    expect(fake.processes()).toBe(3);
  });

  it('hands a freed process to a waiting check of its own domain before killing it for another', async () => {
    const { pool } = setup({ bodyDelayMs: 150 }, { size: 2 });
    await pool.warm();
    // Six checks at once, two domains, two processes: in arrival order the third alice check
    // is first in line when bob's process frees, and bob's last check waits behind it.
    const order = ['alice', 'bob', 'alice', 'alice', 'bob', 'alice'];
    const results = await Promise.all(order.map((d, i) => pool.check(`theorem r${i} : True := by sorry`, { domain: `key:${d}` })));
    expect(results.every((r) => r.status === 'ok')).toBe(true);
    // Only the last alice check, with no bob check left waiting, has bob's process switched.
    expect(pool.stats().retired.domain).toBe(1);
  });

  it("counts an item's own header as the domain's text", async () => {
    const { fake, pool } = setup({}, { size: 2 });
    await pool.warm();
    await pool.check('theorem h1 : True := by sorry', { domain: 'predictions:one', header: 'import ConNF\nopen ConNF' });
    const onePid = lastBodyPid(fake);
    await pool.check('theorem h2 : True := by sorry', { domain: 'predictions:two', header: 'import ConNF\nopen ConNF' });
    expect(lastBodyPid(fake)).not.toBe(onePid);
    // Each process imported the ConNF header for its own domain.
    expect(fake.events().filter((e) => e.event === 'header' && e.detail.includes('ConNF'))).toHaveLength(2);
  });

  it('marks a process with the domain whose header it imported, even when that import failed', async () => {
    // No warm-up: the check starts the process itself.
    const { fake, pool } = setup({ missingModules: ['Batteries.Missing'] }, { size: 1 });
    const failed = await pool.check('import Batteries.Missing\ntheorem m : True := by sorry', { domain: 'predictions:one' });
    expect(failed.status).toBe('error');
    const tainted = fake
      .events()
      .filter((e) => e.event === 'header')
      .at(-1)!.pid;
    await pool.check('theorem other : True := by sorry', { domain: 'predictions:two' });
    expect(lastBodyPid(fake)).not.toBe(tainted);
    expect(pool.stats().retired.domain).toBe(1);
  });
});
