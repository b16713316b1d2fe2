import { describe, expect, it } from 'vitest';
import {
  buildCheckSource,
  compileStatus,
  headerFailure,
  invalidStatementReason,
  splitSnippet,
  toLeanMessages,
} from '../../engines/lean/lean-source';
import type { ReplMessage } from '../../engines/lean/repl-protocol';

describe('splitSnippet', () => {
  it('takes the leading imports and blanks them in the body, keeping line numbers', () => {
    const code = 'import Mathlib\nimport Mathlib.Data.Nat.Prime\nopen Nat\n\ntheorem t : 1 = 1 := by sorry';
    const split = splitSnippet(code);
    expect(split.imports).toEqual([
      { module: 'Mathlib', line: 1 },
      { module: 'Mathlib.Data.Nat.Prime', line: 2 },
    ]);
    expect(split.body.split('\n')).toEqual(['', '', 'open Nat', '', 'theorem t : 1 = 1 := by sorry']);
  });

  it('skips comments before and between imports, and stops at the first command', () => {
    const code = '/- A module doc\n spanning lines -/\n-- note\nimport ConNF -- the library\nopen ConNF\nimport Late';
    const split = splitSnippet(code);
    expect(split.imports).toEqual([{ module: 'ConNF', line: 4 }]);
    expect(split.body.split('\n')[5]).toBe('import Late');
  });

  it('has no imports for a bare statement', () => {
    expect(splitSnippet('theorem t : True := trivial')).toEqual({ imports: [], body: 'theorem t : True := trivial' });
  });
});

describe('buildCheckSource', () => {
  it('uses the library header and drops statement imports it already covers', () => {
    const source = buildCheckSource(
      'import Mathlib\nimport Mathlib.Data.Real.Basic\ntheorem t : (1 : ℝ) = 1 := by sorry',
      'import Mathlib',
    );
    expect(source.header).toBe('import Mathlib');
    expect(source.extraImports).toEqual([]);
    expect(source.body).toBe('\n\ntheorem t : (1 : ℝ) = 1 := by sorry');
  });

  it("puts extra statement imports before the library's preamble", () => {
    const source = buildCheckSource('import Extra.Thing\ntheorem t : True := trivial', 'import ConNF\nopen ConNF Set');
    expect(source.header).toBe('import ConNF\nimport Extra.Thing\nopen ConNF Set');
    expect(source.extraImports).toEqual([{ module: 'Extra.Thing', line: 1 }]);
  });

  it("keeps the statement's own open/set_option lines in the body, so they do not change the header", () => {
    const a = buildCheckSource('open Real\ntheorem t : π > 0 := by sorry', 'import Mathlib');
    const b = buildCheckSource('set_option maxHeartbeats 400000\ntheorem t : True := by sorry', 'import Mathlib');
    expect(a.header).toBe(b.header);
    expect(a.body.startsWith('open Real')).toBe(true);
  });
});

describe('toLeanMessages', () => {
  it('keeps positions (body lines are statement lines), maps endPos and trims text', () => {
    const messages: ReplMessage[] = [
      { severity: 'error', pos: { line: 3, column: 27 }, endPos: { line: 3, column: 37 }, data: "unknown identifier 'Nat.Primee'\n" },
      { severity: 'information', pos: { line: 1, column: 0 }, endPos: null, data: 'note' },
    ];
    expect(toLeanMessages(messages)).toEqual([
      { severity: 'error', line: 3, column: 27, endLine: 3, endColumn: 37, text: "unknown identifier 'Nat.Primee'" },
      { severity: 'info', line: 1, column: 0, text: 'note' },
    ]);
  });
});

describe('compileStatus', () => {
  it('is ok with only warnings (the sorry warning included) and error with any error', () => {
    const warning = { severity: 'warning' as const, line: 1, column: 8, text: "declaration uses 'sorry'" };
    expect(compileStatus([warning])).toBe('ok');
    expect(compileStatus([])).toBe('ok');
    expect(compileStatus([warning, { ...warning, severity: 'error', text: 'unknown identifier' }])).toBe('error');
  });
});

describe('invalidStatementReason', () => {
  it('rejects empty, import-only and oversized statements, accepts a declaration', () => {
    expect(invalidStatementReason('  \n')).toMatch(/empty/);
    expect(invalidStatementReason('import Mathlib\n-- nothing\n')).toMatch(/no declaration/);
    expect(invalidStatementReason('theorem t : True := by sorry'.padEnd(200_000))).toMatch(/limit/);
    expect(invalidStatementReason('theorem t : True := by sorry')).toBeUndefined();
  });
});

describe('headerFailure', () => {
  const missing = (module: string): ReplMessage => ({
    severity: 'error',
    pos: { line: 1, column: 0 },
    endPos: null,
    data: `unknown module prefix '${module}'\n\nNo directory '${module}' in the search path entries`,
  });

  it("blames the statement's import line when the failing module is one the statement added", () => {
    const source = buildCheckSource('\nimport Foo.Bar\ntheorem t : True := trivial', 'import Mathlib');
    expect(headerFailure([missing('Foo')], source)).toEqual({
      blame: 'statement',
      messages: [{ severity: 'error', line: 2, column: 0, text: expect.stringContaining("unknown module prefix 'Foo'") }],
    });
  });

  it('blames the library header otherwise, and says nothing when there is no error', () => {
    const source = buildCheckSource('theorem t : True := trivial', 'import ConNF');
    expect(headerFailure([missing('ConNF')], source)).toMatchObject({ blame: 'library' });
    expect(headerFailure([], source)).toBeUndefined();
  });
});
