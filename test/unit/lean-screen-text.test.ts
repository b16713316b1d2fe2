// The one screening function (engines/lean/screen-text.ts) that every path to Lean and
// `driftline screen` use: which text was refused, where, and what Lean would be sent.
import { describe, expect, it } from 'vitest';
import { describeRefusal, screenText } from '../../engines/lean/screen-text';
import { parseScreenLine, screenLine, ScreenFileError } from '../../bin/screen-command';

describe('screenText', () => {
  it('accepts a statement and gives the text Lean is sent, comments blanked with positions kept', () => {
    const verdict = screenText({ statement: 'theorem t (n : ℕ) : n = n := by sorry -- fine' });
    expect(verdict).toMatchObject({ accepted: true, text: 'theorem t (n : ℕ) : n = n := by sorry        ' });
  });

  it('says which part was refused, at its own positions', () => {
    const header = screenText({ statement: 'theorem t : True := by sorry', header: 'import Mathlib\n\n#eval 1' });
    expect(header).toMatchObject({ accepted: false, part: 'header', message: { line: 3, column: 0 } });
    const statement = screenText({ statement: 'open Nat\n\n  #eval 1\ntheorem t : True := by sorry', header: 'import Mathlib' });
    expect(statement).toMatchObject({ accepted: false, part: 'statement', message: { line: 3, column: 2 } });
    if (!statement.accepted) expect(describeRefusal(statement, 'gold')).toMatch(/^gold is refused before Lean \(line 3, column 2\): /);
  });

  it('refuses an empty text and one with only imports before the grammar, in the same shape', () => {
    for (const statement of ['', '  \n', 'import Mathlib\n-- nothing']) {
      const verdict = screenText({ statement });
      expect(verdict.accepted).toBe(false);
      if (!verdict.accepted) expect(verdict.message.text).toMatch(/^refused before Lean: /);
    }
  });

  it('reads a gold statement as a gold: its proof may be left out; a formalizer text may not', () => {
    expect(screenText({ statement: 'theorem g : 1 = 1 := by', as: 'gold' }).accepted).toBe(true);
    expect(screenText({ statement: 'theorem g : 1 = 1 := by', as: 'formalizer' }).accepted).toBe(false);
  });
});

describe('a line of `driftline screen`', () => {
  it('is {"id"?, "statement", "header"?} with own keys only', () => {
    expect(parseScreenLine('{"statement": "x", "other": 1}', 'f:1')).toEqual({ statement: 'x' });
    expect(parseScreenLine('{"__proto__": {"statement": "x"}, "statement": "y"}', 'f:1')).toEqual({ statement: 'y' });
    expect(() => parseScreenLine('{"__proto__": {"statement": "x"}}', 'f:1')).toThrow(ScreenFileError);
    expect(() => parseScreenLine('{"statement": "x", "id": 1}', 'f:1')).toThrow(/f:1: id: a number, not a string/);
    expect(() => parseScreenLine('17', 'f:9')).toThrow(/f:9: a number, not a JSON object/);
  });

  it('gives a refusal its reason and position, and says when it is the header', () => {
    expect(screenLine({ id: 'a', statement: 'theorem t : True := by sorry' }, 'formalizer')).toEqual({ id: 'a', accepted: true });
    expect(screenLine({ statement: 'theorem t : True := by sorry', header: 'import Lean' }, 'gold')).toMatchObject({
      id: null,
      accepted: false,
      reason: expect.stringMatching(/^in the header: /),
      line: 1,
      column: 7,
    });
  });
});
