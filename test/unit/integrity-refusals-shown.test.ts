// A refusal the screen did not make (a forged REPL reply, a screen/Lean parse disagreement) is a
// hole found, not a screen refusal (decision 0017), and an equivalence check that could not
// compare is "not comparable", never "not equivalent": the record, the sweep report (JSON,
// Markdown, HTML, runs CSV), the CLI, the Temporal UI details and the web page say so.
import { afterEach, describe, expect, it } from 'vitest';
import { recordFromResult } from '../../engines/sweeps/record';
import { renderSweepReport } from '../../engines/report/write-report';
import { toCsv, CSV_COLUMNS } from '../../engines/results/export';
import { printResult, stagePrinter } from '../../bin/run-output';
import { checkLine } from '../../bin/check-command';
import { runCurrentDetails } from '../../common/run-metadata';
import { DEFAULT_RUN_CONFIG } from '../../common/run-config-schema';
import type { CompileResult, EquivalenceResult } from '../../common/lean-types';
import type { FormalizeResult } from '../../common/run-types';
import type { SweepRunRecord } from '../../common/sweep';

const none = { proved: false, withoutHypothesis: [], tried: 0 };
const notComparable: EquivalenceResult = {
  equivalent: false,
  candidateToGold: none,
  goldToCandidate: none,
  notComparable: true,
  reason: 'not comparable: the two statements define different things.',
  durationMs: 0,
};
const forged: CompileResult = {
  status: 'refused',
  refusedBy: 'tampering',
  messages: [{ severity: 'error', line: 1, column: 0, text: 'the REPL wrote a second reply' }],
  reason: 'the REPL wrote a second reply',
  durationMs: 4,
};
const disagreed: CompileResult = {
  status: 'refused',
  refusedBy: 'disagreement',
  messages: [{ severity: 'error', line: 1, column: 9, text: 'unexpected token' }],
  reason: 'Lean could not parse it: unexpected token',
  durationMs: 4,
};
const screened: CompileResult = {
  status: 'refused',
  messages: [{ severity: 'error', line: 1, column: 0, text: 'refused before Lean: `#eval` starts a command' }],
  reason: '`#eval` starts a command',
  durationMs: 0,
};

function result(compile: CompileResult, over: Partial<FormalizeResult> = {}): FormalizeResult {
  return {
    statement: 's',
    library: 'mini',
    config: DEFAULT_RUN_CONFIG,
    formalStatement: 'theorem t : True := by sorry',
    compiled: false,
    checked: false,
    outcome: 'refused',
    attempts: [{ round: 0, statement: 'theorem t : True := by sorry', compile }],
    judge: null,
    subqueries: [],
    premises: [],
    examples: [],
    notes: [],
    stages: [],
    ...over,
  };
}

const unit = (item: string, config = 'A') => ({
  sweepId: 'sw',
  cell: { name: config, hash: `h-${config}` },
  item: { id: item, goldPremises: [], tags: {} },
  sample: 0,
  workflowId: `sw/${config}/${item}/0`,
});

function records(): SweepRunRecord[] {
  const at = new Date(0);
  return [
    recordFromResult(unit('i0'), result(forged), at),
    recordFromResult(unit('i1'), result(disagreed), at),
    recordFromResult(unit('i2'), result(screened), at),
    recordFromResult(
      unit('i3'),
      result(
        { status: 'ok', messages: [], durationMs: 3 },
        { outcome: 'compiled', compiled: true, checked: true, equivalence: notComparable },
      ),
      at,
    ),
  ];
}

describe('the run record', () => {
  it('keeps who refused, and a comparison that could not be made as not measured', () => {
    const [t, d, s, c] = records();
    expect(t).toMatchObject({ outcome: 'refused', refusedBy: 'tampering', attempts: [{ status: 'refused', refusedBy: 'tampering' }] });
    expect(d).toMatchObject({ outcome: 'refused', refusedBy: 'disagreement' });
    expect(s!.refusedBy).toBeUndefined();
    expect(s!.attempts[0]!.refusedBy).toBeUndefined();
    expect(c).toMatchObject({ equivalent: null, notComparable: true });
    // A comparison ended by a forged reply was not made either: not measured, not "not equivalent".
    const ended = recordFromResult(
      unit('i4'),
      result(
        { status: 'ok', messages: [], durationMs: 1 },
        {
          outcome: 'compiled',
          compiled: true,
          checked: true,
          equivalence: { ...notComparable, notComparable: undefined, refusedBy: 'tampering' },
        },
      ),
      new Date(0),
    );
    expect(ended.equivalent).toBeNull();
    expect(ended.notComparable).toBeUndefined();
  });
});

describe('the sweep report', () => {
  const input = {
    sweep: {
      id: 'sw',
      leaveOut: 'file' as const,
      library: 'mini',
      samples: 1,
      configurations: [{ name: 'A', config: DEFAULT_RUN_CONFIG }],
    },
    records: records(),
    bootstrap: { resamples: 50 },
    generatedAt: '2026-12-06T00:00:00.000Z',
  };

  it('counts tampering and disagreement apart from the screen’s refusals', async () => {
    const r = await renderSweepReport(input as unknown as Parameters<typeof renderSweepReport>[0]);
    expect(r.data.lean).toMatchObject({ refused: 1, tampering: 1, disagreement: 1, byLean: 1, attempts: 4 });
    expect(r.data.lean.line).toContain('1 attempt refused by the screen before Lean');
    expect(r.data.lean.line).toContain('1 refused for tampering');
    expect(r.data.lean.line).toContain('1 refused because Lean could not parse what the screen accepted');
    expect(r.data.outcomes).toEqual([
      { config: 'A', counts: { refused: 3, compiled: 1 }, refusedBy: { tampering: 1, disagreement: 1 }, notComparable: 1 },
    ]);
    expect(JSON.parse(r.json).outcomes[0].refusedBy).toEqual({ tampering: 1, disagreement: 1 });

    // Markdown: one column each, the screen's holding only its own refusal.
    const header = r.markdown.split('\n').find((l) => l.startsWith('| configuration') && l.includes('refused'))!;
    const row = r.markdown.split('\n')[r.markdown.split('\n').indexOf(header) + 2]!;
    const cells = (l: string) => l.split('|').map((x) => x.trim());
    const h = cells(header);
    expect(cells(row)[h.indexOf('refused by the screen')]).toBe('1');
    expect(cells(row)[h.indexOf('refused for tampering')]).toBe('1');
    expect(cells(row)[h.indexOf('refused: screen/Lean disagreement')]).toBe('1');
    expect(r.markdown).toMatch(/Equivalence not comparable[^.]*: A 1\./);

    // HTML: the run's badge and title say who refused it.
    expect(r.html).toMatch(/class="badge o-error" title="[^"]*sw\/A\/i0\/0[^"]*refused for tampering/);
    expect(r.html).toMatch(/title="[^"]*sw\/A\/i1\/0[^"]*Lean could not parse what the screen accepted/);
    expect(r.html).not.toMatch(/title="[^"]*sw\/A\/i0\/0[^"]*refused by the screen/);
    expect(r.html).toMatch(/title="[^"]*sw\/A\/i3\/0[^"]*not comparable with gold/);

    // runs.csv: who refused, and the comparison not made.
    const lines = r.runsCsv.trim().split('\r\n');
    const col = (name: (typeof CSV_COLUMNS)[number]) => CSV_COLUMNS.indexOf(name);
    const cellsOf = (i: number) => lines[i + 1]!.split(',');
    expect(lines[0]!.split(',').slice(-2)).toEqual(['refusedBy', 'notComparable']);
    expect(cellsOf(0)[col('refusedBy')]).toBe('tampering');
    expect(cellsOf(1)[col('refusedBy')]).toBe('disagreement');
    expect(cellsOf(2)[col('refusedBy')]).toBe('');
    expect(cellsOf(3)[col('notComparable')]).toBe('true');
    expect(toCsv(records())).toBe(r.runsCsv);
  });
});

describe('the CLI', () => {
  function printed(res: FormalizeResult): string {
    let text = '';
    printResult(res, { write: (s: string) => ((text += s), true) } as unknown as NodeJS.WritableStream);
    return text;
  }

  it('says a forged reply was refused for tampering, not by the screen', () => {
    const text = printed(result(forged));
    expect(text).toContain('outcome:   refused for tampering: the REPL wrote a second reply\n');
    expect(text).toContain("compiled:  no: refused for tampering (the Lean REPL's reply was forged)");
    expect(text).not.toContain('refused by the screen');
    expect(printed(result(disagreed))).toContain('compiled:  no: refused (Lean could not parse what the screen accepted)');

    const lines: string[] = [];
    const print = stagePrinter((l) => lines.push(l));
    const event = (refusedBy?: 'tampering' | 'disagreement') => ({
      seq: 2,
      type: 'stage.completed' as const,
      stage: 'compile',
      time: 't',
      compile: { status: 'refused', errors: 1, ...(refusedBy ? { refusedBy } : {}) },
    });
    print(event('tampering'));
    print(event('disagreement'));
    print(event());
    expect(lines).toEqual([
      "      refused for tampering: the Lean REPL's reply was forged (never compiled)",
      '      refused: Lean could not parse what the screen accepted (never compiled)',
      '      refused by the screen before Lean (Lean never saw it)',
    ]);
  });

  it('says "not comparable" for a comparison that could not be made', () => {
    expect(printed(result({ status: 'ok', messages: [], durationMs: 1 }, { outcome: 'compiled', equivalence: notComparable }))).toContain(
      'gold:      not comparable: not comparable: the two statements define different things.',
    );
    const base = { status: 'ok' as const, compiled: true, messages: [], durationMs: 1 };
    expect(checkLine(0, { ...base, equivalent: false, equivalence: notComparable })).toContain(', not comparable with gold');
    expect(checkLine(0, { ...base, equivalent: false })).toContain(', not equivalent to gold');
    expect(checkLine(0, { ...forged, status: 'refused', compiled: false })).toMatch(/^#1: refused for tampering \(/);
  });
});

describe('the Temporal UI details', () => {
  it('word a refusal by tampering as such', () => {
    const state = { library: 'mini', config: DEFAULT_RUN_CONFIG, stage: 'done' as const, round: 0, outcome: 'refused' as const };
    expect(runCurrentDetails({ ...state, refusal: 'x', refusedBy: 'tampering' })).toContain('**Outcome** REFUSED FOR TAMPERING');
    expect(runCurrentDetails({ ...state, refusal: 'x', refusedBy: 'tampering' })).not.toContain('by the screen');
    expect(runCurrentDetails({ ...state, refusal: 'x' })).toContain('REFUSED by the screen before Lean');
  });
});

// The web page's run view, on a minimal DOM: elements with attributes, children and text.
class FakeNode {
  children: (FakeNode | string)[] = [];
  attrs: Record<string, string> = {};
  constructor(readonly tag: string) {}
  setAttribute(name: string, value: string) {
    this.attrs[name] = value;
  }
  append(...nodes: (FakeNode | string)[]) {
    this.children.push(...nodes);
  }
  get textContent(): string {
    return this.children.map((c) => (typeof c === 'string' ? c : c.textContent)).join('');
  }
  set textContent(text: string) {
    this.children = [text];
  }
}

describe('the web page', () => {
  afterEach(() => {
    delete (globalThis as { document?: unknown }).document;
  });

  it('never reads a refusal by tampering as the screen’s, nor a comparison not made as not equivalent', async () => {
    (globalThis as { document?: unknown }).document = { createElement: (tag: string) => new FakeNode(tag) };
    const { renderResult } = await import('../../web/render');
    const tampered = renderResult(result(forged)) as unknown as FakeNode;
    expect(tampered.textContent).toContain('Refused for tampering');
    expect(tampered.textContent).not.toContain('by the screen');
    const disagreement = renderResult(result(disagreed)) as unknown as FakeNode;
    expect(disagreement.textContent).toContain('Lean could not parse what the screen accepted');
    expect(disagreement.textContent).not.toContain('by the screen');
    const screenedRun = renderResult(result(screened)) as unknown as FakeNode;
    expect(screenedRun.textContent).toContain('Refused by the screen before Lean');
    const compared = renderResult(
      result({ status: 'ok', messages: [], durationMs: 1 }, { outcome: 'compiled', equivalence: notComparable }),
    ) as unknown as FakeNode;
    expect(compared.textContent).toContain('Not comparable with the gold statement');
    expect(compared.textContent).not.toMatch(/not (shown )?equivalent/i);
  });
});
