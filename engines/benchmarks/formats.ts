// Benchmark file formats: each line of a JSONL file becomes one BenchmarkItem. One zod schema
// per format, validated once; a bad line is reported with its file and line number.
import { z } from 'zod';
import type { BenchmarkItem } from '../../common/sweep';

export type BenchmarkFormat = 'rautoformalizer' | 'deepseek' | 'jsonl';

/** For the generic `jsonl` format: which field of a line holds each part of an item. A dotted
 * path reaches into nested objects (`meta.id`). `tags` maps a tag name to a field. */
export interface FieldMap {
  id: string;
  informal: string;
  goldStatement?: string;
  goldPremises?: string;
  header?: string;
  tags?: Record<string, string>;
}

/** ConNF and ProofNet as RAutoformalizer ships them. */
const RAutoformalizerLine = z.object({
  full_name: z.string().min(1),
  informal_stmt: z.string().min(1),
  formal_stmt: z.string().optional(),
  header: z.string().optional(),
  mathlib_dependencies: z.array(z.string()).default([]),
  source: z.string().optional(),
});

/** miniF2F as DeepSeek-Prover ships it. */
const DeepseekLine = z.object({
  name: z.string().min(1),
  split: z.string().optional(),
  informal_prefix: z.string().min(1),
  formal_statement: z.string().optional(),
  header: z.string().optional(),
});

/** A line that is not what its format expects; the loader adds file and line. */
export class BadRecord extends Error {
  override name = 'BadRecord';
  constructor(
    message: string,
    /** The fields at fault, named by the format's schema or the sweep's field map (never by
     * the line itself): what may be said without quoting the file. */
    readonly fields: string[] = [],
  ) {
    super(message);
  }
}

function zodRecord(error: z.ZodError): BadRecord {
  const fields = [...new Set(error.issues.map((i) => i.path[0]).filter((k): k is string => typeof k === 'string'))];
  return new BadRecord(zodProblem(error), fields);
}

function zodProblem(error: z.ZodError): string {
  return error.issues.map((i) => `${i.path.length ? i.path.join('.') : 'record'}: ${i.message}`).join('; ');
}

/** The informal text of a miniF2F item: its docstring `/-- … -/` without the markers. */
export function stripDocComment(text: string): string {
  return text
    .replace(/^\s*\/--\s?/, '')
    .replace(/\s*-\/\s*$/, '')
    .trim();
}

/** Competition and subject of a miniF2F name: `mathd_algebra_478` → `mathd_algebra`,
 * `amc12a_2019_p21` → `amc12a`, `imo_1959_p1` → `imo`. */
export function minif2fDomain(name: string): string {
  return name.replace(/_(\d|p\d).*$/, '');
}

function at(obj: unknown, path: string): unknown {
  let node = obj;
  for (const key of path.split('.')) {
    if (node === null || typeof node !== 'object') return undefined;
    node = (node as Record<string, unknown>)[key];
  }
  return node;
}

export interface ParseContext {
  /** Tags every item of the file gets (e.g. split from the file name). */
  tags: Record<string, string>;
  fields?: FieldMap;
}

/** One parsed JSON line → an item, or BadRecord saying what is wrong. */
export function parseRecord(format: BenchmarkFormat, raw: unknown, ctx: ParseContext): BenchmarkItem {
  if (format === 'rautoformalizer') {
    const r = RAutoformalizerLine.safeParse(raw);
    if (!r.success) throw zodRecord(r.error);
    const d = r.data;
    const tags: Record<string, string> = { ...ctx.tags };
    if (d.source) tags.source = d.source;
    return {
      id: d.full_name,
      informal: d.informal_stmt,
      ...(d.formal_stmt ? { goldStatement: d.formal_stmt } : {}),
      goldPremises: [...new Set(d.mathlib_dependencies)],
      ...(d.header ? { header: d.header } : {}),
      tags,
    };
  }
  if (format === 'deepseek') {
    const r = DeepseekLine.safeParse(raw);
    if (!r.success) throw zodRecord(r.error);
    const d = r.data;
    const informal = stripDocComment(d.informal_prefix);
    if (!informal) throw new BadRecord('informal_prefix: no text inside the doc comment', ['informal_prefix']);
    return {
      id: d.name,
      informal,
      ...(d.formal_statement ? { goldStatement: d.formal_statement.trim() } : {}),
      goldPremises: [],
      ...(d.header ? { header: d.header } : {}),
      tags: { ...ctx.tags, domain: minif2fDomain(d.name), ...(d.split ? { split: d.split } : {}) },
    };
  }
  const fields = ctx.fields;
  if (!fields) throw new BadRecord('the jsonl format needs a field map (benchmark.fields)');
  const text = (name: string, path: string | undefined, required: boolean): string | undefined => {
    if (!path) return undefined;
    const v = at(raw, path);
    if (v === undefined || v === null) {
      if (required) throw new BadRecord(`${path}: missing (field map: ${name})`, [path]);
      return undefined;
    }
    if (typeof v === 'number' && name === 'id') return String(v);
    if (typeof v !== 'string') throw new BadRecord(`${path}: expected a string (field map: ${name}), got ${typeof v}`, [path]);
    if (required && !v.trim()) throw new BadRecord(`${path}: empty (field map: ${name})`, [path]);
    return v;
  };
  const id = text('id', fields.id, true)!;
  const informal = text('informal', fields.informal, true)!;
  const goldStatement = text('goldStatement', fields.goldStatement, false);
  const header = text('header', fields.header, false);
  let goldPremises: string[] = [];
  if (fields.goldPremises) {
    const v = at(raw, fields.goldPremises);
    if (v !== undefined && v !== null) {
      if (!Array.isArray(v) || v.some((x) => typeof x !== 'string')) {
        throw new BadRecord(`${fields.goldPremises}: expected an array of names (field map: goldPremises)`, [fields.goldPremises]);
      }
      goldPremises = [...new Set(v as string[])];
    }
  }
  const tags: Record<string, string> = { ...ctx.tags };
  for (const [tag, path] of Object.entries(fields.tags ?? {})) {
    const v = at(raw, path);
    if (v !== undefined && v !== null) tags[tag] = String(v);
  }
  return {
    id,
    informal,
    ...(goldStatement ? { goldStatement } : {}),
    goldPremises,
    ...(header ? { header } : {}),
    tags,
  };
}
