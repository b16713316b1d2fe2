import { describe, expect, it } from 'vitest';
import { encodeCommand, isErrorReply, parseReply, ReplyFramer } from '../../engines/lean/repl-protocol';

// A reply as Lean prints it: pretty, over many lines, newlines in strings escaped, then a blank line.
const leanReply = (env: number) =>
  `{"messages":\n [{"severity": "error",\n   "pos": {"line": 1, "column": 23},\n   "endPos": {"line": 1, "column": 26},\n   "data":\n   "type mismatch\\n  rfl\\nhas type\\n  f = f : Prop"}],\n "env": ${env}}\n\n`;

describe('encodeCommand', () => {
  it('writes one line of JSON and exactly one blank line', () => {
    const wire = encodeCommand({ cmd: 'theorem t :\n  True := by\n\n  sorry', env: 3 });
    expect(wire.endsWith('}\n\n')).toBe(true);
    expect(wire.slice(0, -2)).not.toContain('\n');
    expect(JSON.parse(wire)).toEqual({ cmd: 'theorem t :\n  True := by\n\n  sorry', env: 3 });
  });

  it('omits env for a fresh environment', () => {
    expect(JSON.parse(encodeCommand({ cmd: 'import Mathlib' }))).toEqual({ cmd: 'import Mathlib' });
  });
});

describe('ReplyFramer', () => {
  it('reassembles a reply delivered one character at a time', () => {
    const framer = new ReplyFramer();
    const text = leanReply(6);
    const replies = [...text].flatMap((c) => framer.push(c));
    expect(replies).toHaveLength(1);
    expect(parseReply(replies[0])).toMatchObject({ env: 6, messages: [{ severity: 'error', pos: { line: 1, column: 23 } }] });
    expect(framer.pending()).toBe('');
  });

  it('splits several replies arriving in one chunk, and keeps a partial one for later', () => {
    const framer = new ReplyFramer();
    const all = leanReply(0) + leanReply(1) + leanReply(2);
    const cut = all.length - 10;
    expect(framer.push(all.slice(0, cut)).map((r) => (r as { env: number }).env)).toEqual([0, 1]);
    expect(framer.push(all.slice(cut)).map((r) => (r as { env: number }).env)).toEqual([2]);
  });

  it('finds a blank line split across chunks', () => {
    const framer = new ReplyFramer();
    expect(framer.push('{"env": 4}\n')).toEqual([]);
    expect(framer.push('\n')).toEqual([{ env: 4 }]);
  });

  it('handles a multi-megabyte reply in 64 KiB chunks', () => {
    const framer = new ReplyFramer();
    const big = JSON.stringify(
      { env: 9, messages: [{ severity: 'info', pos: { line: 1, column: 0 }, endPos: null, data: 'y'.repeat(3_000_000) }] },
      null,
      1,
    );
    const text = `${big}\n\n`;
    const replies: unknown[] = [];
    for (let i = 0; i < text.length; i += 65_536) replies.push(...framer.push(text.slice(i, i + 65_536)));
    expect(replies).toHaveLength(1);
    const reply = parseReply(replies[0]);
    expect(!isErrorReply(reply) && reply.messages?.[0]?.data.length).toBe(3_000_000);
  });

  it('reports stray non-JSON output as noise instead of a reply, and a block glued to a reply is not a reply', () => {
    const noise: string[] = [];
    const framer = new ReplyFramer((text) => noise.push(text));
    const replies = framer.push('Processing incremental state [pos: 0..10]:\n\n{"env": 1}\n\nlog line\n{"env": 2}\n\n');
    expect(replies).toEqual([{ env: 1 }]);
    expect(noise).toEqual(['Processing incremental state [pos: 0..10]:', 'log line\n{"env": 2}']);
  });
});

describe('parseReply', () => {
  it('accepts command replies and error replies, and rejects anything else', () => {
    expect(isErrorReply(parseReply({ message: 'Unknown environment.' }))).toBe(true);
    expect(isErrorReply(parseReply({ env: 0 }))).toBe(false);
    expect(() => parseReply({ hello: 1 })).toThrow(/Not a REPL reply/);
  });
});
