// `driftline screen FILE.jsonl`: the real command (the compiled CLI), offline, on files a user
// or an attacker could write. Refusals are results (exit 0); a file that cannot be read or a
// line that is not `{"id"?, "statement", "header"?}` exits 1 naming the line, quoting nothing.
import { spawnSync } from 'node:child_process';
import { mkdtempSync, openSync, writeFileSync, writeSync, closeSync, chmodSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { beforeAll, describe, expect, it } from 'vitest';

const BIN = fileURLToPath(new URL('../../bin/driftline.js', import.meta.url));
let dir: string;

function screen(lines: string[] | string, ...args: string[]): { code: number | null; stdout: string; stderr: string } {
  const file = join(dir, `f-${Math.random().toString(36).slice(2)}.jsonl`);
  writeFileSync(file, Array.isArray(lines) ? lines.join('\n') : lines);
  return run(file, ...args);
}

function run(file: string, ...args: string[]) {
  // No Temporal, no Lean, no LLM: nothing of the stack is configured or reachable.
  const out = spawnSync(process.execPath, [BIN, 'screen', file, ...args], {
    encoding: 'utf8',
    env: { ...process.env, TEMPORAL_ADDRESS: '127.0.0.1:1', DRIFTLINE_DATA_DIR: dir },
    maxBuffer: 64 * 1024 * 1024,
  });
  return { code: out.status, stdout: out.stdout, stderr: out.stderr };
}

const json = (stdout: string) =>
  stdout
    .trim()
    .split('\n')
    .map((l) => JSON.parse(l) as Record<string, unknown>);

beforeAll(() => {
  dir = mkdtempSync(join(tmpdir(), 'driftline-screen-'));
});

describe('driftline screen', () => {
  it('prints one verdict per line in order, with the reason and position of each refusal', () => {
    const out = screen(
      [
        JSON.stringify({ id: 'ok', statement: 'theorem t (n : ℕ) : n + 0 = n := by sorry' }),
        JSON.stringify({ id: 'eval', statement: 'open Nat\n  #eval IO.println 1\ntheorem t : True := by sorry' }),
        '',
        JSON.stringify({ statement: 'theorem t : 1 = 1 := by\n  rfl' }),
        JSON.stringify({ id: 'hdr', statement: 'theorem t : True := by sorry', header: 'import Mathlib\nimport Lean.Elab' }),
      ],
      '--json',
    );
    expect(out.stderr).toBe('');
    expect(out.code).toBe(0);
    const results = json(out.stdout);
    expect(results).toHaveLength(4);
    expect(results[0]).toEqual({ id: 'ok', accepted: true });
    expect(results[1]).toMatchObject({ id: 'eval', accepted: false, line: 2, column: 2, reason: expect.stringMatching(/#eval/) });
    expect(results[2]).toMatchObject({ id: null, accepted: false, reason: expect.stringMatching(/proof/) });
    expect(results[3]).toMatchObject({
      id: 'hdr',
      accepted: false,
      line: 2,
      reason: expect.stringMatching(/^in the header: .*Lean\.Elab/),
    });
    for (const r of results) expect(Object.keys(r).every((k) => ['id', 'accepted', 'reason', 'line', 'column'].includes(k))).toBe(true);
  });

  it('reads a gold statement with --as gold: its proof may be left out, which a formalizer text may not', () => {
    const gold = [JSON.stringify({ id: 'g', statement: 'theorem g (a : ℤ) : a * 1 = a := by', header: 'import Mathlib\nopen Real' })];
    expect(json(screen(gold, '--json', '--as', 'gold').stdout)).toEqual([{ id: 'g', accepted: true }]);
    expect(json(screen(gold, '--json').stdout)[0]).toMatchObject({ id: 'g', accepted: false });
    expect(screen(gold, '--as', 'proof').code).toBe(1);
  });

  it('summarizes for people: counts, then each refusal with its id, position and reason', () => {
    const out = screen([
      JSON.stringify({ id: 'fine', statement: 'theorem t : True := by sorry' }),
      JSON.stringify({ id: 'bad\u001b[31m', statement: 'theorem t : True := by sorry\nrun_cmd pure ()' }),
    ]);
    expect(out.code).toBe(0);
    expect(out.stdout).toMatch(/2 formalizer texts screened: 1 accepted, 1 refused/);
    // The id is quoted with its control characters escaped, never written raw to a terminal.
    expect(out.stdout).toContain('"bad\\u001b[31m" (line 2): refused at 2:0:');
    expect(out.stdout).not.toContain('\u001b');
  });

  it('exits 1 naming the line when a line is not such an object, and prints no verdicts', () => {
    const good = JSON.stringify({ statement: 'theorem t : True := by sorry' });
    const cases: [string, RegExp][] = [
      ['[1, 2]', /:2: a list, not a JSON object/],
      ['"theorem t : True := by sorry"', /:2: a string, not a JSON object/],
      ['null', /:2: null, not a JSON object/],
      ['{"statement": "theorem', /:2: not JSON/],
      ['{"id": "x"}', /:2: statement: missing/],
      ['{"statement": 5}', /:2: statement: a number, not a string/],
      ['{"statement": "theorem t : True := by sorry", "id": {"toString": "x"}}', /:2: id: an object, not a string/],
      ['{"statement": "theorem t : True := by sorry", "header": ["import Mathlib"]}', /:2: header: a list, not a string/],
      // A prototype key is data: it gives the line no `statement`.
      ['{"__proto__": {"statement": "theorem t : True := by sorry"}}', /:2: statement: missing/],
      ['{"constructor": {"statement": "x"}, "toString": 1}', /:2: statement: missing/],
    ];
    for (const [line, problem] of cases) {
      const out = screen([good, line, good], '--json');
      expect(out.code, line).toBe(1);
      expect(out.stdout, line).toBe('');
      expect(out.stderr, line).toMatch(problem);
      // Nothing of the file is echoed.
      expect(out.stderr).not.toContain('theorem');
    }
  });

  it('reads own keys only, ignores other fields, and screens a prototype-named text like any other', () => {
    const out = screen(
      [
        JSON.stringify({ statement: 'theorem t : True := by sorry', prediction: 'x', sample: 3 }),
        '{"statement": "theorem t : True := by sorry", "__proto__": {"id": 7}}',
        JSON.stringify({ id: '__proto__', statement: 'theorem t : True := by sorry' }),
      ],
      '--json',
    );
    expect(out.code).toBe(0);
    expect(json(out.stdout)).toEqual([
      { id: null, accepted: true },
      { id: null, accepted: true },
      { id: '__proto__', accepted: true },
    ]);
  });

  it('refuses a huge statement as a result, and stops with exit 1 at a line too long to read', () => {
    const huge = JSON.stringify({ id: 'huge', statement: `theorem t : ${'1 + '.repeat(250_000)}1 = 1 := by sorry` });
    const out = screen([huge], '--json');
    expect(out.code).toBe(0);
    expect(json(out.stdout)[0]).toMatchObject({ id: 'huge', accepted: false, reason: expect.stringMatching(/characters long/) });

    // Past 64 MiB a line is not read whole: the command says which line, without reading it into memory.
    const file = join(dir, 'giant.jsonl');
    const fd = openSync(file, 'w');
    writeSync(fd, `${JSON.stringify({ statement: 'theorem t : True := by sorry' })}\n{"statement": "`);
    const block = Buffer.alloc(1024 * 1024, 'a');
    for (let i = 0; i < 65; i++) writeSync(fd, block);
    writeSync(fd, '"}\n');
    closeSync(fd);
    const giant = run(file, '--json');
    expect(giant.code).toBe(1);
    expect(giant.stderr).toMatch(/giant\.jsonl:2: the line is longer than/);
  });

  it('exits 1 on a file it cannot read: missing, a directory, not UTF-8, unreadable', () => {
    expect(run(join(dir, 'missing.jsonl')).stderr).toMatch(/no such file/);
    expect(run(dir).code).toBe(1);
    const latin1 = join(dir, 'latin1.jsonl');
    writeFileSync(latin1, Buffer.from('{"statement": "theorem t : \xe9 = \xe9 := by sorry"}\n', 'latin1'));
    const bad = run(latin1);
    expect(bad.code).toBe(1);
    expect(bad.stderr).toMatch(/latin1\.jsonl:1: the line is not UTF-8/);
    if (process.getuid?.() !== 0) {
      const locked = join(dir, 'locked.jsonl');
      writeFileSync(locked, '{"statement": "theorem t : True := by sorry"}\n');
      chmodSync(locked, 0o000);
      expect(run(locked).code).toBe(1);
    }
  });

  it('treats an empty file as zero lines screened, and CRLF and a BOM as plain lines', () => {
    expect(screen('', '--json')).toMatchObject({ code: 0, stdout: '' });
    const out = screen('\uFEFF{"id": "a", "statement": "theorem t : True := by sorry"}\r\n{"id": "b", "statement": "#exit"}\r\n', '--json');
    expect(out.code).toBe(0);
    expect(json(out.stdout)).toMatchObject([
      { id: 'a', accepted: true },
      { id: 'b', accepted: false },
    ]);
  });

  it('is listed in --help with its contract', () => {
    const help = spawnSync(process.execPath, [BIN, 'screen', '--help'], { encoding: 'utf8' }).stdout;
    expect(help).toMatch(/--as <kind>/);
    expect(help).toMatch(/formalizer/);
    expect(help).toMatch(/--json/);
    expect(help).toMatch(/Exit status: 0/);
    expect(spawnSync(process.execPath, [BIN, '--help'], { encoding: 'utf8' }).stdout).toMatch(/^ {2}screen\b/m);
  });
});
