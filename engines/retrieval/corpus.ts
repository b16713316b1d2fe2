// A library corpus: one declaration per JSONL line, in our own format or in the
// RAutoformalizer format (detected per line). Loading streams the file, validates each line
// once with zod, and names the file and line of anything it cannot read.
import { createReadStream } from 'node:fs';
import { createInterface } from 'node:readline';
import { z } from 'zod';

/** One library declaration, as retrieval and illustration see it. */
export interface Declaration {
  /** Full name, e.g. `Nat.Prime`. */
  name: string;
  /** `def`, `theorem`, `class`, `structure`, `inductive`, `abbrev`, `instance`, … as the
   * corpus spells it (RAutoformalizer also has `noncomputable def`, `structure_field`, …). */
  kind: string;
  /** The pretty-printed declaration. */
  signature: string;
  docstring?: string;
  /** Dotted module path, e.g. `Mathlib.Data.Nat.Prime.Defs`. */
  module?: string;
  /** Source text. */
  source?: string;
  /** An informal description (written or generated). */
  informal?: string;
  /** Constants the declaration uses; for theorems, those of its statement. Names, no repeats. */
  uses: string[];
}

/** Theorems (and lemmas) are what illustration shows; everything else can be a premise. */
export function isTheorem(decl: Pick<Declaration, 'kind'>): boolean {
  // The last word, so `protected theorem` or `private lemma` count as well.
  const last = decl.kind.trim().split(/\s+/).pop() ?? '';
  return last === 'theorem' || last === 'lemma';
}

/** A line of our own corpus format (what the Lean extraction program writes). */
export const CorpusLineSchema = z.object({
  name: z.string().min(1),
  kind: z.string().min(1),
  signature: z.string(),
  docstring: z.string().optional(),
  module: z.string().optional(),
  source: z.string().optional(),
  informal: z.string().optional(),
  uses: z.array(z.string()).default([]),
});
export type CorpusLine = z.infer<typeof CorpusLineSchema>;

/** A line of the RAutoformalizer premise corpus (`connf/library.jsonl`). */
export const RAutoLineSchema = z.object({
  full_name: z.string().min(1),
  ptype: z.string().min(1),
  header: z.string(),
  code: z.string().optional(),
  def_path: z.string().optional(),
  pos: z.array(z.number()).optional(),
  additional_info: z.string().optional(),
  informalization: z.string().optional(),
  // 0-based line numbers in the same file; resolved to names once the whole file is read.
  used_premises: z.array(z.number().int().nonnegative()).default([]),
  code_src: z.string().optional(),
});
export type RAutoLine = z.infer<typeof RAutoLineSchema>;

/** The marker RAutoformalizer puts after every premise name in `header`. */
export const PREMISE_MARKER = '🔗<|PREMISE|>🔗';

export class CorpusLineError extends Error {
  constructor(
    readonly file: string,
    /** 1-based, as editors show it. */
    readonly line: number,
    detail: string,
  ) {
    super(`${file}:${line}: ${detail}`);
    this.name = 'CorpusLineError';
  }
}

export interface Corpus {
  path: string;
  declarations: Declaration[];
  /** Lines skipped (with skipBadLines) and references that could not be resolved. */
  warnings: string[];
}

export interface LoadCorpusOptions {
  /** Skip unreadable lines and report them in `warnings` instead of failing. */
  skipBadLines?: boolean;
}

export function stripPremiseMarkers(header: string): string {
  return header.split(PREMISE_MARKER).join('');
}

/** `ConNF/NewTangle/Cloud.lean` → `ConNF.NewTangle.Cloud`. */
export function modulePathToName(path: string): string {
  return path
    .replace(/\.lean$/, '')
    .split('/')
    .filter(Boolean)
    .join('.');
}

type Parsed = { format: 'driftline'; decl: Declaration } | { format: 'rautoformalizer'; decl: Declaration; usedLines: number[] };

function nonEmpty(s: string | undefined): string | undefined {
  return s !== undefined && s.trim() !== '' ? s : undefined;
}

function dedupe(names: string[]): string[] {
  return [...new Set(names)];
}

/** Parses one non-blank line; throws an Error with a human-readable reason. */
export function parseCorpusLine(text: string): Parsed {
  let raw: unknown;
  try {
    raw = JSON.parse(text);
  } catch (e) {
    throw new Error(`not JSON (${(e as Error).message})`);
  }
  if (raw === null || typeof raw !== 'object' || Array.isArray(raw)) {
    throw new Error('expected a JSON object');
  }
  const obj = raw as Record<string, unknown>;
  if ('full_name' in obj || 'ptype' in obj) {
    const r = RAutoLineSchema.safeParse(obj);
    if (!r.success) throw new Error(`RAutoformalizer line: ${z.prettifyError(r.error)}`);
    const l = r.data;
    const decl: Declaration = {
      name: l.full_name,
      kind: l.ptype,
      signature: stripPremiseMarkers(l.header).trim(),
      uses: [],
    };
    const docstring = nonEmpty(l.additional_info);
    if (docstring) decl.docstring = docstring;
    if (l.def_path) decl.module = modulePathToName(l.def_path);
    const source = nonEmpty(l.code);
    if (source) decl.source = source;
    const informal = nonEmpty(l.informalization);
    if (informal) decl.informal = informal;
    return { format: 'rautoformalizer', decl, usedLines: l.used_premises };
  }
  if ('name' in obj) {
    const r = CorpusLineSchema.safeParse(obj);
    if (!r.success) throw new Error(`corpus line: ${z.prettifyError(r.error)}`);
    const l = r.data;
    const decl: Declaration = { name: l.name, kind: l.kind, signature: l.signature, uses: dedupe(l.uses) };
    for (const key of ['docstring', 'module', 'source', 'informal'] as const) {
      const v = nonEmpty(l[key]);
      if (v) decl[key] = v;
    }
    return { format: 'driftline', decl };
  }
  throw new Error('unknown format: expected `name` (driftline) or `full_name` (RAutoformalizer)');
}

/** Reads a corpus file line by line. Duplicate names keep the first declaration. */
export async function loadCorpus(path: string, opts: LoadCorpusOptions = {}): Promise<Corpus> {
  const warnings: string[] = [];
  // Index = 0-based physical line number, which is what `used_premises` refers to.
  const byLine: (Declaration | undefined)[] = [];
  const pending: { decl: Declaration; usedLines: number[]; line: number }[] = [];
  const declarations: Declaration[] = [];
  const seen = new Set<string>();

  const input = createReadStream(path, { encoding: 'utf8' });
  const lines = createInterface({ input, crlfDelay: Infinity });
  let lineNo = 0;
  try {
    for await (const text of lines) {
      lineNo++;
      if (text.trim() === '') {
        byLine.push(undefined);
        continue;
      }
      let parsed: Parsed;
      try {
        parsed = parseCorpusLine(text);
      } catch (e) {
        const err = new CorpusLineError(path, lineNo, (e as Error).message);
        if (!opts.skipBadLines) throw err;
        warnings.push(`skipped ${err.message}`);
        byLine.push(undefined);
        continue;
      }
      byLine.push(parsed.decl);
      if (parsed.format === 'rautoformalizer') {
        pending.push({ decl: parsed.decl, usedLines: parsed.usedLines, line: lineNo });
      }
      if (seen.has(parsed.decl.name)) {
        warnings.push(`${path}:${lineNo}: duplicate declaration ${parsed.decl.name} ignored`);
        continue;
      }
      seen.add(parsed.decl.name);
      declarations.push(parsed.decl);
    }
  } catch (e) {
    if (e instanceof CorpusLineError) throw e;
    throw new Error(`cannot read corpus ${path}: ${(e as Error).message}`);
  } finally {
    lines.close();
    input.destroy();
  }

  // Line references can point forwards, so they are resolved after the whole file is read.
  for (const p of pending) {
    const names: string[] = [];
    for (const target of p.usedLines) {
      const d = byLine[target];
      if (d) names.push(d.name);
      else warnings.push(`${path}:${p.line}: used_premises refers to line ${target} (0-based), which holds no declaration`);
    }
    p.decl.uses = dedupe(names);
  }
  return { path, declarations, warnings };
}
