// The human-labelled judge calibration set: model-generated formal statements for benchmark
// items (`autoformalization.json`: item name → [{formal_stmt_pred, typecheck_result}]), each
// labelled by people as equivalent to the gold statement or not (`labels.json`: statement text →
// boolean), joined with the benchmark (informal and gold statements) by item name.
import { readFileSync } from 'node:fs';
import { basename, join } from 'node:path';
import { z } from 'zod';

export interface LabelledItem {
  /** `<set>/<benchmark item>#<index>`: unique within a calibration run. */
  id: string;
  set: string;
  item: string;
  informal: string;
  gold: string;
  /** The model-generated statement the judge grades. */
  candidate: string;
  /** Whether Lean accepted the candidate, as recorded with the data. */
  typechecks: boolean;
  /** The human verdict: equivalent to the gold statement. */
  equivalent: boolean;
}

export class LabelDataError extends Error {}

const Predictions = z.record(
  z.string(),
  z.array(z.object({ formal_stmt_pred: z.string().min(1), typecheck_result: z.object({ is_success: z.boolean() }).optional() })),
);
const Labels = z.record(z.string(), z.boolean());
const BenchmarkLine = z.object({ full_name: z.string(), informal_stmt: z.string(), formal_stmt: z.string() });

function readJson(path: string): unknown {
  let text: string;
  try {
    text = readFileSync(path, 'utf8');
  } catch (err) {
    throw new LabelDataError(`cannot read ${path}: ${(err as Error).message}`);
  }
  try {
    return JSON.parse(text);
  } catch (err) {
    throw new LabelDataError(`${path} is not valid JSON: ${(err as Error).message}`);
  }
}

function parse<T>(schema: z.ZodType<T>, value: unknown, where: string): T {
  const r = schema.safeParse(value);
  if (!r.success) throw new LabelDataError(`${where} does not have the expected shape:\n${z.prettifyError(r.error)}`);
  return r.data;
}

/** The benchmark's items by name (informal and gold statement). A bad line is named. */
export function loadBenchmarkStatements(path: string): Map<string, { informal: string; gold: string }> {
  let text: string;
  try {
    text = readFileSync(path, 'utf8');
  } catch (err) {
    throw new LabelDataError(`cannot read benchmark ${path}: ${(err as Error).message}`);
  }
  const out = new Map<string, { informal: string; gold: string }>();
  text.split('\n').forEach((line, i) => {
    if (!line.trim()) return;
    let value: unknown;
    try {
      value = JSON.parse(line);
    } catch (err) {
      throw new LabelDataError(`${path}:${i + 1} is not valid JSON: ${(err as Error).message}`);
    }
    const rec = parse(BenchmarkLine, value, `${path}:${i + 1}`);
    out.set(rec.full_name, { informal: rec.informal_stmt, gold: rec.formal_stmt });
  });
  return out;
}

/**
 * Loads one labelled set (a directory with `autoformalization.json` and `labels.json`) against
 * the benchmark's statements. Every candidate must have a label and every item a benchmark entry.
 */
export function loadLabelledSet(dir: string, benchmark: Map<string, { informal: string; gold: string }>): LabelledItem[] {
  const set = basename(dir.replace(/\/+$/, ''));
  const predPath = join(dir, 'autoformalization.json');
  const labelPath = join(dir, 'labels.json');
  const preds = parse(Predictions, readJson(predPath), predPath);
  const labels = parse(Labels, readJson(labelPath), labelPath);
  const items: LabelledItem[] = [];
  for (const [item, candidates] of Object.entries(preds)) {
    const ref = benchmark.get(item);
    if (!ref) throw new LabelDataError(`${predPath}: item "${item}" is not in the benchmark`);
    candidates.forEach((c, i) => {
      const equivalent = labels[c.formal_stmt_pred];
      if (equivalent === undefined) throw new LabelDataError(`${labelPath}: no label for the statement of "${item}" (#${i})`);
      items.push({
        id: `${set}/${item}#${i}`,
        set,
        item,
        informal: ref.informal,
        gold: ref.gold,
        candidate: c.formal_stmt_pred,
        typechecks: c.typecheck_result?.is_success ?? true,
        equivalent,
      });
    });
  }
  return items;
}
