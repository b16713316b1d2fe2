// What the CLI prints about a run (bin/run-output.ts): a statement the screen refused is shown as
// the screen's verdict with its reason, never as a compile error or "not checked".
import { Writable } from 'node:stream';
import { describe, expect, it } from 'vitest';
import { printResult, stagePrinter } from '../../bin/run-output';
import { DEFAULT_RUN_CONFIG } from '../../common/run-config-schema';
import type { FormalizeResult } from '../../common/run-types';

function captured(): { out: Writable; text: () => string } {
  let text = '';
  const out = new Writable({
    write(chunk, _enc, done) {
      text += String(chunk);
      done();
    },
  });
  return { out, text: () => text };
}

const HOSTILE = '#eval IO.getEnv "OPENAI_API_KEY"\ntheorem t : True := by sorry';

function result(over: Partial<FormalizeResult>): FormalizeResult {
  return {
    statement: 'p is prime',
    library: 'mini',
    config: DEFAULT_RUN_CONFIG,
    formalStatement: HOSTILE,
    compiled: false,
    checked: false,
    outcome: 'refused',
    attempts: [
      {
        round: 0,
        statement: HOSTILE,
        compile: {
          status: 'refused',
          messages: [{ severity: 'error', line: 1, column: 0, text: 'refused before Lean: `#eval` starts a command' }],
          reason: '`#eval` starts a command',
          durationMs: 0,
        },
      },
    ],
    judge: null,
    subqueries: [],
    premises: [],
    examples: [],
    notes: [],
    stages: [],
    ...over,
  };
}

describe('CLI run output', () => {
  it('shows a refused run as the screen’s verdict, with its reason and message', () => {
    const { out, text } = captured();
    printResult(result({}), out as unknown as NodeJS.WritableStream);
    expect(text()).toContain('outcome:   refused by the screen: `#eval` starts a command\n');
    expect(text()).toContain('compiled:  no: refused by the screen before Lean (Lean never saw it)  (1 attempt)\n');
    expect(text()).toContain('screen:    1:0: error: refused before Lean: `#eval` starts a command\n');
    expect(text()).not.toMatch(/not checked|Lean rejected|lean: /);
  });

  it('keeps Lean’s verdicts as Lean’s', () => {
    const { out, text } = captured();
    printResult(
      result({
        outcome: 'not-compiled',
        checked: true,
        attempts: [
          {
            round: 0,
            statement: 'theorem t : Foo := by sorry',
            compile: {
              status: 'error',
              messages: [{ severity: 'error', line: 1, column: 12, text: "unknown identifier 'Foo'" }],
              durationMs: 5,
            },
          },
        ],
      }),
      out as unknown as NodeJS.WritableStream,
    );
    expect(text()).toContain('outcome:   not-compiled\n');
    expect(text()).toContain('compiled:  no: Lean rejected it  (1 attempt)\n');
    expect(text()).toContain("lean:      1:12: error: unknown identifier 'Foo'\n");
  });

  it('says when the gold statement was refused, and prints a refused compile round as such', () => {
    const { out, text } = captured();
    const none = { proved: false, withoutHypothesis: [], tried: 0 };
    printResult(
      result({
        outcome: 'unchecked',
        equivalence: {
          equivalent: false,
          candidateToGold: none,
          goldToCandidate: none,
          refused: 'gold',
          reason: 'refused before Lean: `#eval` starts a command',
          durationMs: 0,
        },
      }),
      out as unknown as NodeJS.WritableStream,
    );
    expect(text()).toContain('gold:      not checked: the gold statement was refused by the screen: `#eval` starts a command\n');

    const lines: string[] = [];
    const print = stagePrinter((l) => lines.push(l));
    print({
      seq: 1,
      type: 'stage.completed',
      stage: 'compile',
      activity: 'compile',
      round: 0,
      time: '',
      compile: { status: 'refused', errors: 1 },
    });
    print({
      seq: 2,
      type: 'stage.completed',
      stage: 'compile',
      activity: 'compile',
      round: 1,
      time: '',
      compile: { status: 'error', errors: 2 },
    });
    expect(lines).toEqual(['      refused by the screen before Lean (Lean never saw it)', '      Lean rejected it (2 errors)']);
  });
});
