// The rescore section's tables (judge-agreement.ts computes what they show), rendered by the
// HTML and Markdown reports alike.
import type { Table } from './tables';
import { kappaText, rescoreLine, type JudgeAgreement } from './judge-agreement';

export function agreementTables(a: JudgeAgreement, bootstrap: { resamples: number; seed: number }): Table[] {
  const header = [
    'configuration',
    'units',
    'carried over',
    'judged by both',
    'compared (compiled)',
    'both faithful',
    'source judge only',
    'new judge only',
    'neither',
    'agreement (%)',
    "Cohen's κ (faithful)",
    'weighted κ (grades)',
  ];
  const summary: Table = {
    id: 'judge-agreement',
    title: `Judges side by side: the source's and ${a.rescore.judge}`,
    caption:
      `Rescore ${rescoreLine(a.rescore)}. κ compares the faithful verdicts of the units both judges graded and Lean accepted (elsewhere both are "unfaithful" by rule, whatever the judges said). ` +
      `Weighted κ: quadratic weights on the 0–10 grades of the same units. Intervals: 95% percentile bootstrap over items (an item's samples drawn together; B = ${bootstrap.resamples}, seed ${bootstrap.seed}); resamples where κ is undefined are left out. ` +
      'κ is undefined when both judges gave every unit one and the same verdict.',
    header,
    rows: a.configs.map((c) => [
      c.config,
      String(c.units),
      String(c.carried),
      String(c.judgedByBoth),
      String(c.compared),
      String(c.table.both),
      String(c.table.firstOnly),
      String(c.table.secondOnly),
      String(c.table.neither),
      c.observed === null ? '–' : (c.observed * 100).toFixed(1),
      kappaText(c.kappa),
      kappaText(c.weightedKappa),
    ]),
    numeric: header.map((_, i) => i).filter((i) => i > 0 && i < 10),
  };
  const tables = [summary];
  if (a.disagreements.length > 0) {
    tables.push({
      id: 'judge-disagreements',
      title: 'Where the judges disagree',
      caption: 'Units whose faithful verdict changed, with both grades.',
      header: ['configuration', 'item', 'sample', 'source grade', 'source verdict', 'new grade', 'new verdict'],
      rows: a.disagreements.map((d) => [
        d.config,
        d.item,
        String(d.sample),
        String(d.sourceGrade),
        d.sourceFaithful ? 'faithful' : 'unfaithful',
        String(d.grade),
        d.faithful ? 'faithful' : 'unfaithful',
      ]),
      numeric: [2, 3, 5],
    });
  }
  return tables;
}
