// The exit statuses of `formalize`, `check` and `sweep status` (bin/exit-codes.ts), and that
// `--help` and docs/cli.md say the same.
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { checksExitCode, EXIT_HELP, formalizeExitCode, sweepStatusExitCode } from '../../bin/exit-codes';

describe('formalize exits', () => {
  it('0 compiled or unchecked, 2 Lean rejected, 3 the screen refused', () => {
    expect(formalizeExitCode({ outcome: 'faithful', checked: true, compiled: true })).toBe(0);
    expect(formalizeExitCode({ outcome: 'unfaithful', checked: true, compiled: true })).toBe(0);
    expect(formalizeExitCode({ outcome: 'unchecked', checked: false, compiled: false })).toBe(0);
    expect(formalizeExitCode({ outcome: 'not-compiled', checked: true, compiled: false })).toBe(2);
    // Refused: Lean never saw it (checked false), with or without Lean configured.
    expect(formalizeExitCode({ outcome: 'refused', checked: false, compiled: false })).toBe(3);
  });
});

describe('check exits', () => {
  const s = (failed: number, rejected: number, refused: number) => ({ failed, rejected, refused });
  it('with the worst of the batch: a failed check, then a rejection, then a refusal', () => {
    expect(checksExitCode(s(0, 0, 0))).toBe(0);
    expect(checksExitCode(s(0, 0, 2))).toBe(3);
    expect(checksExitCode(s(0, 1, 2))).toBe(2);
    expect(checksExitCode(s(1, 1, 2))).toBe(1);
  });
});

describe('sweep status exits', () => {
  it('by the state the sweep is in when the command ends', () => {
    expect(sweepStatusExitCode({ status: 'running', failed: 3 })).toBe(0);
    expect(sweepStatusExitCode({ status: 'paused', failed: 0 })).toBe(0);
    expect(sweepStatusExitCode({ status: 'completed', failed: 0 })).toBe(0);
    expect(sweepStatusExitCode({ status: 'completed', failed: 1 })).toBe(2);
    for (const status of ['cancelled', 'failed', 'budget-exhausted']) expect(sweepStatusExitCode({ status, failed: 0 })).toBe(3);
  });
});

describe('the help and docs/cli.md', () => {
  it('say the same, word for word', () => {
    const docs = readFileSync(new URL('../../docs/cli.md', import.meta.url), 'utf8');
    for (const [command, help] of Object.entries(EXIT_HELP)) {
      // Each epilogue's sentence is in the docs as it is in --help.
      expect(docs, command).toContain(help.replace(/^\nExit status: /, ''));
    }
  });
});
