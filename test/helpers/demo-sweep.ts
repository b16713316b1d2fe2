// A synthetic 2×2×2 sweep (decompose × illustrate × repair) over a few dozen items, with
// outcomes drawn from a seeded generator: enough structure for the report to show every
// section. Used by the report tests; not a measurement of anything.
import { uniformInt } from 'pure-rand/distribution/uniformInt';
import { xoroshiro128plus } from 'pure-rand/generator/xoroshiro128plus';
import type { FactorialDesign, SweepRunRecord } from '../../common/sweep';
import { runRecord } from './sweep-records';

export function demoSweep(
  items = 40,
  samples = 2,
): { records: SweepRunRecord[]; design: FactorialDesign; configurations: Record<string, unknown> } {
  const rng = xoroshiro128plus(99);
  const u = () => uniformInt(rng, 0, 9999) / 10000;
  const factors = [
    { name: 'decompose', low: 'off', high: 'on' },
    { name: 'illustrate', low: 'off', high: 'on' },
    { name: 'repair', low: '0 rounds', high: '3 rounds' },
  ];
  const cells: FactorialDesign['cells'] = {};
  const configurations: Record<string, unknown> = {};
  const records: SweepRunRecord[] = [];
  const domains = ['sets', 'orders', 'cardinals'];
  for (let cell = 0; cell < 8; cell++) {
    const d = cell & 1,
      il = (cell >> 1) & 1,
      rep = (cell >> 2) & 1;
    const name = `d${d}-i${il}-r${rep}`;
    cells[name] = { decompose: d as 0 | 1, illustrate: il as 0 | 1, repair: rep as 0 | 1 };
    configurations[name] = { decompose: d === 1, illustrate: il === 1, repairRounds: rep ? 3 : 0 };
    for (let i = 0; i < items; i++) {
      const hard = (i % 5) / 5;
      for (let s = 0; s < samples; s++) {
        const pFirst = 0.25 + 0.1 * d + 0.08 * il - 0.2 * hard;
        const attempts: { round: number; compiled: boolean }[] = [];
        let compiled = false;
        for (let round = 0; round <= (rep ? 3 : 0); round++) {
          compiled = u() < pFirst + 0.12 * round;
          attempts.push({ round, compiled });
          if (compiled) break;
        }
        const grade = compiled ? (u() < 0.55 + 0.1 * d ? 9 + (u() < 0.5 ? 1 : 0) : 6) : 2;
        const gold = ['ConNF.Params', `ConNF.Def${i % 7}`, `ConNF.Aux${i % 3}`];
        const premises = d
          ? ['ConNF.Params', u() < 0.6 ? `ConNF.Def${i % 7}` : 'ConNF.Other', `ConNF.Aux${(i + (u() < 0.5 ? 0 : 1)) % 3}`]
          : ['ConNF.Params', 'ConNF.Other', 'ConNF.Misc', u() < 0.4 ? `ConNF.Def${i % 7}` : 'ConNF.Else', 'ConNF.More'];
        const failed = u() < 0.01;
        records.push(
          runRecord({
            sweepId: 'demo',
            config: name,
            item: `ConNF.item_${String(i).padStart(3, '0')}`,
            sample: s,
            compiled: failed ? false : compiled,
            outcome: failed ? 'failed' : compiled ? (grade >= 9 ? 'faithful' : 'unfaithful') : 'not-compiled',
            checked: !failed,
            attempts: failed ? [] : attempts,
            repairRounds: failed ? 0 : attempts.length - 1,
            judgeGrade: failed ? null : grade,
            faithful: failed ? null : compiled && grade >= 9,
            equivalent: failed || !compiled ? null : u() < 0.4,
            premises: failed ? [] : premises,
            goldPremises: gold,
            tags: { domain: domains[i % 3]!, split: 'dev' },
            stageMs: failed
              ? {}
              : ({
                  decompose: d ? 800 + 400 * u() : undefined,
                  retrieve: 40 + 30 * u(),
                  illustrate: il ? 30 + 10 * u() : undefined,
                  formalize: 1500 + 1500 * u(),
                  compile: 300 * attempts.length,
                  repair: 1200 * (attempts.length - 1),
                  judge: 900 + 300 * u(),
                } as SweepRunRecord['stageMs']),
            usage: {
              promptTokens: 1500 + Math.round(500 * u()),
              completionTokens: 300,
              totalTokens: 1800 + Math.round(500 * u()),
              costUsd: 0.002,
            },
            error: failed ? 'LlmUnauthorized: the provider refused the API key' : undefined,
          }),
        );
      }
    }
  }
  // Strip undefined stage entries so records look like the results database's.
  for (const r of records)
    for (const [k, v] of Object.entries(r.stageMs)) if (v === undefined) delete (r.stageMs as Record<string, unknown>)[k];
  return { records, design: { factors, cells }, configurations };
}
