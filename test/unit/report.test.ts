import { mkdtemp, readFile, readdir, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { renderPaperTables, renderSweepReport, writeSweepReport } from '../../engines/report/write-report';
import { latexText } from '../../engines/report/paper-tables';
import { temporalRunUrl } from '../../engines/report/report-data';
import { csvField } from '../../engines/results/export';
import { runRecord } from '../helpers/sweep-records';
import { demoSweep } from '../helpers/demo-sweep';

const dirs: string[] = [];
afterAll(async () => {
  for (const d of dirs) await rm(d, { recursive: true, force: true });
});

describe('sweep report', () => {
  const demo = demoSweep(16, 2);
  const input = {
    sweep: {
      id: 'demo',
      title: 'Demo <sweep>',
      leaveOut: 'file' as const,
      library: 'connf',
      samples: 2,
      design: demo.design,
      configurations: demo.configurations,
    },
    records: demo.records,
    temporalUi: { base: 'http://localhost:8233/', namespace: 'default' },
    bootstrap: { resamples: 200 },
    generatedAt: '2026-11-30T08:00:00.000Z',
  };

  it("writes the paper's tables as well-formed LaTeX tabulars with the page's numbers", async () => {
    const { html, latex } = await renderSweepReport(input);
    const tabulars = [...latex.matchAll(/\\begin\{tabular\}\{([lr]+)\}\n([\s\S]*?)\\end\{tabular\}/g)];
    expect(tabulars.length).toBeGreaterThanOrEqual(3); // main, ablation, factorial effects
    expect(latex.match(/\\begin\{table\}/g)!.length).toBe(latex.match(/\\end\{table\}/g)!.length);
    for (const [, spec, body] of tabulars) {
      const lines = body!.split('\n').filter(Boolean);
      expect(lines[0]).toBe('\\toprule');
      expect(lines.at(-1)).toBe('\\bottomrule');
      // Every row has one cell per column: unescaped `&` count = columns − 1.
      for (const row of lines.filter((l) => l.endsWith('\\\\'))) expect(row.split(/(?<!\\)&/).length, row).toBe(spec!.length);
    }
    // The main table's cells are the numbers the page shows (same intervals).
    const main = tabulars[0]![2]!
      .split('\n')
      .filter((l) => l.endsWith('\\\\'))
      .slice(1);
    expect(main.length).toBe(Object.keys(demo.configurations!).length);
    for (const row of main) {
      for (const cell of row
        .replace(/ \\\\$/, '')
        .split(' & ')
        .slice(2))
        expect(html, cell).toContain(cell.replace(/--/g, '–'));
    }
    expect(latex).toMatch(/\\caption\{Differences against /);
    expect(latexText('50% of a_b & {c} #1')).toBe('50\\% of a\\_b \\& \\{c\\} \\#1');
  });

  it("the item grid unfolds each item's informal statement and each configuration's Lean statements and verdicts", async () => {
    const item = demo.records[0]!.item;
    const withText = {
      ...input,
      sweep: { ...input.sweep, informal: { [item]: 'If p < q & q is prime <then> …' } },
      records: demo.records.map((r, i) => (i === 0 ? { ...r, formalStatement: 'theorem thm_P (p : ℕ) : p < p + 1 := by sorry' } : r)),
    };
    const { html } = await renderSweepReport(withText);
    expect(html).toContain(
      `${item}<details class="cell"><summary>statement</summary><p class="informal">If p &lt; q &amp; q is prime &lt;then&gt; …</p></details>`,
    );
    expect(html).toContain('<pre class="lean">theorem thm_P (p : ℕ) : p &lt; p + 1 := by sorry</pre>');
    const cells = html.match(/<details class="cell"><summary>Lean<\/summary>/g) ?? [];
    expect(cells.length).toBe(new Set(demo.records.map((r) => `${r.item}/${r.config}`)).size);
  });

  it('renders the tables against a chosen baseline, and refuses an unknown one', () => {
    const names = Object.keys(demo.configurations!);
    const md = renderPaperTables(input, 'md', names[1]);
    expect(md).toContain(`**Differences against ${names[1]}.**`);
    expect(md).toMatch(/^\| Configuration \| n \|/m);
    expect(() => renderPaperTables(input, 'latex', 'nope')).toThrow(/no configuration "nope"/);
  });

  it('writes index.html, Markdown, CSV and JSON into the directory', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'driftline-report-'));
    dirs.push(dir);
    const out = join(dir, 'nested', 'report');
    const { files } = await writeSweepReport(out, input);
    expect(files.map((f) => f.slice(out.length + 1)).sort()).toEqual([
      'index.html',
      'metrics.csv',
      'report.json',
      'report.md',
      'runs.csv',
      'tables.tex',
    ]);
    expect((await readdir(out)).sort()).toEqual(['index.html', 'metrics.csv', 'report.json', 'report.md', 'runs.csv', 'tables.tex']);
    const json = JSON.parse(await readFile(join(out, 'report.json'), 'utf8'));
    expect(json.configs).toHaveLength(8);
    expect(json.factorial.map((f: { response: string }) => f.response)).toEqual(['faithful@1', 'typecheck@1', 'beq@1', 'f1']);
  });

  it('is one self-contained page: inline SVG charts, no scripts, nothing fetched', async () => {
    const { html } = await renderSweepReport(input);
    expect(html).not.toMatch(/<script|<link|<img|<iframe|@import|url\(/i);
    expect(html).not.toMatch(/(src|href)="https?:\/\/(?!localhost:8233)/);
    // rates, retrieval, budget curve and one effects chart per factorial response
    expect(html.match(/<svg/g)!.length).toBe(3 + 4);
    expect(html).toContain('Cumulative success against repair budget');
    expect(html).toContain('Factorial effects on faithful@1');
    expect(html).toContain('Demo &lt;sweep&gt;');
  });

  it('states the same protocol on the page and in the Markdown: split, leave-out policy, configurations, intervals', async () => {
    const { html, markdown } = await renderSweepReport(input);
    const configs = demo.configurations ? Object.keys(demo.configurations).join(', ') : '';
    for (const [label, value] of [
      ['leave-out policy', 'file'],
      ['library', 'connf'],
      ['samples per item', '2'],
      ['configurations', configs],
      ['intervals', 'rates whose items each succeed or fail (one sample, and every @k): 95% Wilson score intervals'],
      ['tests', 'rates: McNemar'],
    ] as const) {
      expect(markdown).toContain(`- **${label}**: ${value}`);
      expect(html).toContain(`<dt>${label}</dt><dd>${value}`);
    }
  });

  it('links every run to its Temporal UI page by URL-encoded workflow ID', async () => {
    const { html } = await renderSweepReport(input);
    const r = demo.records[0]!;
    expect(temporalRunUrl('http://localhost:8233/', 'default', r.workflowId)).toBe(
      `http://localhost:8233/namespaces/default/workflows/${encodeURIComponent(r.workflowId)}`,
    );
    expect(r.workflowId).toContain('/');
    expect(html).toContain(`href="http://localhost:8233/namespaces/default/workflows/demo%2Fd0-i0-r0%2FConNF.item_000%2F0"`);
    expect(html.match(/class="badge [^"]+" title="[^"]*" href="http:\/\/localhost:8233\/namespaces\/default\/workflows\//g)!.length).toBe(
      demo.records.length,
    );
  });

  it('shows intervals, factorial effects and says when a difference is within noise', async () => {
    const { html, markdown } = await renderSweepReport(input);
    expect(html).toMatch(/\d+\.\d \[\d+\.\d, \d+\.\d\]/);
    expect(html).toContain('Is each configuration ahead of the next one?');
    expect(html).toContain('within noise');
    expect(html).toContain('decompose × illustrate × repair');
    expect(html).toContain('Simple effects (faithful@1)');
    expect(html).toMatch(/repair = 0 rounds: [+-]\d+\.\d \[/);
    expect(markdown).toContain('| configuration | items | runs | failed |');
    expect(markdown).toContain('### Effects (faithful@1)');
    expect(markdown).toMatch(/### Repair budget: d1-i1-r1\n\n\| rounds \| compiles \(%\) \| faithful \(%\) \|\n\| ---: \| ---: \| ---: \|/);
  });

  it('writes one metrics row per group and metric, and one runs row per record', async () => {
    const { metricsCsv, runsCsv, data } = await renderSweepReport(input);
    const runLines = runsCsv.trim().split('\r\n');
    expect(runLines).toHaveLength(demo.records.length + 1);
    expect(runLines[0]).toMatch(/^sweepId,config,configHash,item,sample,workflowId,outcome,compiled/);
    const metricLines = metricsCsv.trim().split('\r\n');
    const faithful = metricLines.find((l) => l.startsWith('d1-i1-r1,,,faithful@1,'))!;
    const [, , , , est, lo, hi, n] = faithful.split(',');
    const g = data.metrics.configs.find((c) => c.config === 'd1-i1-r1')!;
    expect(Number(est)).toBeCloseTo(g.faithful!.at1.estimate, 12);
    expect(Number(lo)).toBeCloseTo(g.faithful!.at1.lo, 12);
    expect(Number(hi)).toBeCloseTo(g.faithful!.at1.hi, 12);
    expect(Number(n)).toBe(16);
    expect(metricLines.some((l) => l.startsWith('d1-i1-r1,domain,sets,faithful@1,'))).toBe(true);
    expect(csvField('a,"b"')).toBe('"a,""b"""');
  });

  it('explains a design that cannot be analysed instead of failing the report', async () => {
    const cells = { ...demo.design.cells };
    delete cells['d1-i1-r1'];
    const { html } = await renderSweepReport({ ...input, sweep: { ...input.sweep, design: { factors: demo.design.factors, cells } } });
    expect(html).toContain('No factorial analysis: factorial design: no cell declared for decompose=1, illustrate=1, repair=1');
  });

  it('draws the step-budget curve for agent runs, and shows tokens and cost when reported', async () => {
    const records = [0, 1, 2, 3].map((i) =>
      runRecord({
        config: 'agent',
        item: `i${i}`,
        compiled: i < 3,
        agentSteps: 4 + i,
        compiledAtStep: i < 3 ? 2 + i : null,
        judgeGrade: i < 2 ? 10 : 3,
        faithful: i < 2,
        usage: { promptTokens: 900, completionTokens: 100, totalTokens: 1000, costUsd: 0.01 },
        stageMs: { agent: 1000 * (i + 1), judge: 100 },
      }),
    );
    const { html, markdown, data } = await renderSweepReport({ sweep: { id: 'agent' }, records, bootstrap: { resamples: 50 } });
    expect(html).toContain('Cumulative success against agent step budget');
    expect(data.stepCurves[0]!.points.at(-1)).toEqual({ budget: 7, compiled: 0.75, faithful: 0.5 });
    expect(markdown).toContain('### Step budget: agent');
    expect(html).toContain('<th class="num">tokens / run</th>');
    expect(html).toContain('0.04 (0.0100/run)');
    // The agent loop's time is a stage of the latency table.
    expect(markdown).toMatch(/\| configuration \| agent \| judge \| total \|/);
    expect(data.metrics.configs[0]!.latency.agent).toMatchObject({ runs: 4 });
  });

  it("labels refused runs as the screen's verdict and says whether Lean ran at all", async () => {
    const refused = (item: string) =>
      runRecord({
        config: 'A',
        item,
        outcome: 'refused',
        checked: false,
        refusal: '`#eval` starts a command',
        attempts: [{ round: 0, compiled: false, status: 'refused' }],
      });
    // No Lean configured: every attempt skipped or refused.
    const noLean = [
      refused('i0'),
      runRecord({
        config: 'A',
        item: 'i1',
        outcome: 'unchecked',
        checked: false,
        attempts: [{ round: 0, compiled: false, status: 'skipped' }],
      }),
    ];
    const a = await renderSweepReport({ sweep: { id: 'no-lean' }, records: noLean, bootstrap: { resamples: 50 } });
    expect(a.data.lean.line).toBe('not configured, nothing was compiled (1 attempt refused by the screen before Lean)');
    expect(a.markdown).toContain('- **Lean**: not configured, nothing was compiled (1 attempt refused by the screen before Lean)');
    expect(a.html).toContain('<dt>Lean</dt><dd>not configured, nothing was compiled (1 attempt refused by the screen before Lean)</dd>');
    // The outcome table names who decided.
    expect(a.markdown).toMatch(
      /\| configuration \| refused by the screen \| not checked \(no Lean\) \|\n\| --- \| ---: \| ---: \|\n\| A \| 1 \| 1 \|/,
    );
    expect(a.html).toMatch(
      /<span class="badge o-refused" title="[^"]*refused by the screen before Lean: `#eval` starts a command[^"]*">R<\/span>/,
    );
    expect(a.html).not.toContain('did not compile');
    expect(a.runsCsv.split('\r\n')[0]).toContain(',refusal,');
    expect(a.runsCsv).toContain('`#eval` starts a command');

    // Every attempt refused, Lean configured or not: Lean never ran.
    const allRefused = await renderSweepReport({
      sweep: { id: 'refused' },
      records: [refused('i0'), refused('i1')],
      bootstrap: { resamples: 50 },
    });
    expect(allRefused.data.lean.line).toBe('never ran: the screen refused every attempt before Lean (2)');

    // Lean ran on some: how many attempts each decided.
    const mixed = [
      refused('i0'),
      runRecord({
        config: 'A',
        item: 'i1',
        compiled: true,
        attempts: [
          { round: 0, compiled: false, status: 'refused' },
          { round: 1, compiled: true, status: 'ok' },
        ],
      }),
      runRecord({ config: 'A', item: 'i2', compiled: false, attempts: [{ round: 0, compiled: false }] }),
    ];
    const m = await renderSweepReport({ sweep: { id: 'mixed' }, records: mixed, bootstrap: { resamples: 50 } });
    expect(m.data.lean.line).toBe('ran on 2 of 4 attempts (the last attempt of 2 of 3 runs); 2 attempts refused by the screen before Lean');
    expect(m.markdown).toMatch(/\| configuration \| compiled, not judged \| Lean rejected \| refused by the screen \|/);
  });

  it('says how many failed runs `sweep retry` started again, per configuration, in the tables, findings and JSON', async () => {
    const records = [
      runRecord({ config: 'A', item: 'x', compiled: true, retryRound: 1 }),
      runRecord({ config: 'A', item: 'y', outcome: 'failed', error: 'provider down', retryRound: 2 }),
      runRecord({ config: 'A', item: 'z', compiled: true }),
      runRecord({ config: 'B', item: 'x', compiled: true }),
      runRecord({ config: 'B', item: 'y', compiled: false }),
      runRecord({ config: 'B', item: 'z', compiled: true }),
    ];
    const report = await renderSweepReport({ sweep: { id: 'r' }, records, bootstrap: { resamples: 50 } });
    expect(JSON.parse(report.json).retried).toEqual([
      { config: 'A', runs: 2, failedAgain: 1 },
      { config: 'B', runs: 0, failedAgain: 0 },
    ]);
    expect(report.markdown).toMatch(/\| configuration \| items \| runs \| failed \| retried \|/);
    expect(report.markdown).toMatch(/\| A \| 3 \| 3 \| 1 \| 2 \|/);
    expect(report.markdown).toMatch(/\| B \| 3 \| 3 \| 0 \| 0 \|/);
    expect(report.markdown).toContain(
      'started again by `driftline sweep retry` (their records replace the failed ones): A 2 (1 failed again).',
    );
    expect(report.html).toContain('A 2 (1 failed again)');
    // A sweep never retried has no such column.
    const plain = await renderSweepReport({
      sweep: { id: 'p' },
      records: records.map(({ retryRound: _r, ...r }) => r),
      bootstrap: { resamples: 50 },
    });
    expect(JSON.parse(plain.json).retried).toBeUndefined();
    expect(plain.markdown).not.toMatch(/\| retried \|/);
  });

  it('draws every rate at 0 as labelled zero bars, not bare whiskers, and an all-zero retrieval chart likewise', async () => {
    const records = ['a', 'b', 'c', 'd'].flatMap((item) =>
      ['drift', 'none'].map((config) =>
        runRecord({
          config,
          item,
          premises: config === 'drift' ? ['X.unrelated'] : [],
          goldPremises: ['Z.gold'],
          ...(item === 'a'
            ? { outcome: 'refused' as const, checked: false, attempts: [{ round: 0, compiled: false, status: 'refused' as const }] }
            : {}),
        }),
      ),
    );
    const { html } = await renderSweepReport({ sweep: { id: 'zero' }, records, bootstrap: { resamples: 50 } });
    const charts = [...html.matchAll(/<div class="chart">(<svg[\s\S]*?<\/svg>)<\/div>/g)].map((m) => m[1]!);
    const [rates, retrieval] = charts;
    expect(rates).toContain('Rates per configuration');
    expect(retrieval).toContain('Dependency retrieval against gold premises');
    for (const svg of [rates!, retrieval!]) {
      expect(svg).toContain('Every value is 0');
      // One value label per bar (2 configurations × the groups), each "0".
      const labels = [...svg.matchAll(/<text[^>]*>([^<]*)<\/text>/g)].map((m) => m[1]);
      const groups = svg === rates ? 2 : 4;
      expect(labels.filter((t) => t === '0').length).toBeGreaterThanOrEqual(2 * groups);
      // Each bar also a coloured line at its value, in the series' colour (tableau10's first two).
      for (const colour of ['#4c78a8', '#f58518'])
        expect(svg).toMatch(new RegExp(`aria-roledescription="tick" d="M[^"]*h(\\d+\\.?\\d*)v2\\.5h[^"]*" fill="${colour}"`));
    }
  });

  it('shows the configurations as tables (what differs, what is shared), never as JSON', async () => {
    const records = [runRecord({ config: 'drift', item: 'x', compiled: true }), runRecord({ config: 'zero-shot', item: 'x' })];
    const configurations = {
      drift: { retrieval: 'drift', repairRounds: 3, judge: true, tools: ['write_file', 'run_lean'], models: { judge: 'big' } },
      'zero-shot': { retrieval: 'none', repairRounds: 0, judge: true, tools: ['write_file', 'run_lean'], models: { judge: 'big' } },
    };
    const { html, markdown } = await renderSweepReport({ sweep: { id: 'c', configurations }, records, bootstrap: { resamples: 50 } });
    const section = html.slice(html.indexOf('<h2 id="configurations">'), html.indexOf('<footer>'));
    expect(section).not.toContain('{');
    expect(section).toContain('<th>setting</th><th>drift</th><th>zero-shot</th>');
    expect(section).toContain('<tr><td>retrieval</td><td>drift</td><td>none</td></tr>');
    expect(section).toContain('<tr><td>repairRounds</td><td>3</td><td>0</td></tr>');
    expect(section).toMatch(/<summary>Settings every configuration shares \(3\)<\/summary>/);
    expect(section).toContain('<tr><td>judge</td><td>on</td></tr>');
    expect(section).toContain('<tr><td>tools</td><td>write_file, run_lean</td></tr>');
    expect(section).toContain('<tr><td>models.judge</td><td>big</td></tr>');
    expect(markdown).toContain('| retrieval | drift | none |');
    expect(markdown).toContain('| models.judge | big |');
  });

  it("links runs in the caller's namespace, in the page and in runs.csv (the report has no default of its own)", async () => {
    const records = [runRecord({ config: 'A', item: 'x', compiled: true })];
    const { html, runsCsv } = await renderSweepReport({
      sweep: { id: 's' },
      records,
      temporalUi: { base: 'http://ui.example:8233', namespace: 'night shift' },
      bootstrap: { resamples: 50 },
    });
    expect(html).toContain('http://ui.example:8233/namespaces/night%20shift/workflows/');
    expect(runsCsv).toContain('http://ui.example:8233/namespaces/night%20shift/workflows/');
    expect(`${html}${runsCsv}`).not.toContain('/namespaces/default/');
  });

  it('works without a Temporal UI (no links) and refuses a sweep with no runs', async () => {
    const records = [runRecord({ config: 'A', item: '<b>x</b>', compiled: true })];
    const { html } = await renderSweepReport({ sweep: { id: 's' }, records, bootstrap: { resamples: 50 } });
    expect(html).not.toContain('/namespaces/');
    expect(html).toContain('&lt;b&gt;x&lt;/b&gt;');
    await expect(renderSweepReport({ sweep: { id: 'empty' }, records: [] })).rejects.toThrow(/no finished runs/);
  });
});
