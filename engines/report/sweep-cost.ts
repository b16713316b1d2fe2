// What a sweep's LLM calls cost, from the ledger's rows per run: what was paid, what the same
// calls would have cost sent one at a time (the saving of batch mode), for the sweep and per
// configuration, and the sentence the report states it in. A cost that a call to a model
// without a price leaves unknown is null, never 0. Pure.
import type { SweepRunRecord } from '../../common/sweep';
import type { RunLlmCost } from '../results/llm-ledger';

export interface CostFigures {
  /** USD paid; null when a paid call's model has no price (unknown, not too low). */
  usd: number | null;
  /** USD the same calls would have cost sent one at a time; null likewise. */
  usdIfSynchronous: number | null;
  /** LLM calls, cache hits included. */
  calls: number;
  /** Calls answered through a provider batch. */
  batchCalls: number;
  /** Paid calls to models without a price (DRIFTLINE_LLM_PRICES). */
  unpricedCalls: number;
}

/** The sweep's cost (every ledger row of its runs), and each configuration's (the rows of its
 * reported runs), configurations in the report's order. */
export interface SweepCost extends CostFigures {
  perConfig: ({ config: string } & CostFigures)[];
}

function figures(rows: readonly RunLlmCost[]): CostFigures {
  let calls = 0;
  let batchCalls = 0;
  let unpricedCalls = 0;
  let usd = 0;
  let sync = 0;
  for (const r of rows) {
    calls += r.calls;
    batchCalls += r.batchCalls;
    unpricedCalls += r.unpricedCalls;
    usd += r.costUsd;
    sync += r.costIfSyncUsd;
  }
  const known = unpricedCalls === 0;
  return { usd: known ? usd : null, usdIfSynchronous: known ? sync : null, calls, batchCalls, unpricedCalls };
}

export function sweepCost(rows: readonly RunLlmCost[], records: readonly SweepRunRecord[], configs: readonly string[]): SweepCost {
  const configOf = new Map(records.map((r) => [r.workflowId, r.config]));
  return {
    ...figures(rows),
    perConfig: configs.map((config) => ({ config, ...figures(rows.filter((r) => configOf.get(r.runId) === config)) })),
  };
}

/** An amount of US dollars as a person reads it: in cents, and below a cent with two
 * significant digits (a sweep against cheap models costs fractions of a cent). */
export function usdAmount(usd: number): string {
  if (usd === 0) return '0';
  return usd >= 0.00995 ? usd.toFixed(2) : String(Number(usd.toPrecision(2)));
}

export const formatUsd = (usd: number): string => `$${usdAmount(usd)}`;

/** A share of a price in words: "half", "a quarter", or a percentage. */
function shareWords(share: number): string {
  const named: [number, string][] = [
    [0.5, 'half'],
    [0.25, 'a quarter'],
    [0.75, 'three quarters'],
    [1, 'all'],
  ];
  return named.find(([v]) => Math.abs(share - v) < 0.005)?.[1] ?? `${Math.round(share * 100)}%`;
}

/** The report's sentence: what the calls cost and, when some went through batches, what they
 * would have cost one at a time. */
export function costLine(c: CostFigures): string {
  const of = (n: number) => `${n} of ${c.calls} call${c.calls === 1 ? '' : 's'}`;
  if (c.usd === null || c.usdIfSynchronous === null)
    return `unknown: ${of(c.unpricedCalls)} went to models without a price (DRIFTLINE_LLM_PRICES)`;
  if (c.batchCalls === 0) return `${formatUsd(c.usd)} for ${c.calls} LLM call${c.calls === 1 ? '' : 's'}`;
  const saved = c.usdIfSynchronous - c.usd;
  const share = c.usdIfSynchronous > 0 ? `: ${shareWords(c.usd / c.usdIfSynchronous)} of that, ${formatUsd(saved)} saved` : '';
  return `${formatUsd(c.usd)}, ${of(c.batchCalls)} in batches; ${formatUsd(c.usdIfSynchronous)} if sent one at a time${share}`;
}
