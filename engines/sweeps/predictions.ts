// Predictions files: formal statements made elsewhere (Herald, Kimina, a fine-tune), one JSON
// object per line, mapped by a predictions configuration's `fields` to (item id, sample index,
// statement). Every line is checked before a sweep starts; the first bad one stops it, named
// `FILE:LINE: field: problem`. Lines naming items outside the sweep's selection are ignored and
// counted (a file often covers a whole benchmark while a sweep selects part of it); a file none
// of whose lines names an item of the selection is an error (most likely a wrong `fields.id`).
import { createHash } from 'node:crypto';
import { readFile } from 'node:fs/promises';
import { SCREEN_LIMITS } from '../lean/statement-safety';
import type { PredictionsSource } from './sweep-file';

/** What is wrong, in words that quote nothing of the file (what the HTTP API may say). */
export interface PredictionsProblem {
  /** 1-based line; absent for the file as a whole. */
  line?: number;
  /** The line's field at fault, as the configuration's `fields` names it; `(line)` for the line. */
  field?: string;
  problem: string;
}

export class PredictionsError extends Error {
  override name = 'PredictionsError';
  constructor(
    /** The file as loaded (a resolved path). */
    readonly path: string,
    readonly at: PredictionsProblem,
    /** Said only where the file may be quoted (the CLI): e.g. the item id at fault. */
    readonly detail?: string,
  ) {
    super(`${describeProblem(at, path)}${detail ? ` (${detail})` : ''}`);
  }
}

/** `FILE:LINE: field: problem`, naming the file as `name`. */
export function describeProblem(at: PredictionsProblem, name: string): string {
  const where = at.line !== undefined ? `${name}:${at.line}` : name;
  return `${where}: ${at.field ? `${at.field}: ` : ''}${at.problem}`;
}

/** A predictions file read for one configuration of a sweep. */
export interface PredictionSet {
  /** sha256 of the file's bytes: part of the configuration's hash (`--reuse`). */
  sha256: string;
  /** One statement per (item, sample) of the sweep's selection that the file gives. */
  entries: { item: string; sample: number; statement: string }[];
  /** Lines naming items outside the sweep's selection (ignored): their count and the first. */
  ignored: { lines: number; firstLine?: number };
}

export interface ReadPredictionsOptions {
  /** The sweep's item ids (its selection). */
  items: readonly string[];
  /** Samples per item: a sample index must be below it. */
  samples: number;
}

function problem(path: string, line: number, field: string, what: string, detail?: string): PredictionsError {
  return new PredictionsError(path, { line, field, problem: what }, detail);
}

/** Reads and checks a predictions file against the sweep's items and samples. */
export async function readPredictions(source: PredictionsSource, options: ReadPredictionsOptions): Promise<PredictionSet> {
  let bytes: Buffer;
  try {
    bytes = await readFile(source.path);
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code;
    throw new PredictionsError(source.path, {
      problem: `cannot read the predictions file: ${code === 'ENOENT' ? 'no such file' : code === 'EISDIR' ? 'a directory' : 'not readable'}`,
    });
  }
  return parsePredictions(bytes, source, options);
}

/** Parses a predictions file's bytes (pure). */
export function parsePredictions(bytes: Buffer | string, source: PredictionsSource, options: ReadPredictionsOptions): PredictionSet {
  const { path, fields } = source;
  const sha256 = createHash('sha256').update(bytes).digest('hex');
  const wanted = new Set(options.items);
  const lineOf = new Map<string, number>();
  const entries: PredictionSet['entries'] = [];
  const ignored: PredictionSet['ignored'] = { lines: 0 };
  const lines = bytes.toString('utf8').split('\n');
  for (let i = 0; i < lines.length; i++) {
    const text = lines[i]!;
    const line = i + 1;
    if (text.trim() === '') continue;
    let raw: unknown;
    try {
      raw = JSON.parse(text);
    } catch {
      throw problem(path, line, '(line)', 'not JSON');
    }
    if (!raw || typeof raw !== 'object' || Array.isArray(raw)) throw problem(path, line, '(line)', 'not a JSON object');
    const record = raw as Record<string, unknown>;
    const id = record[fields.id];
    if (id === undefined || id === null) throw problem(path, line, fields.id, 'missing (the item id)');
    if (typeof id !== 'string') throw problem(path, line, fields.id, `the item id is ${typeOf(id)}, not a string`);
    if (id.trim() === '') throw problem(path, line, fields.id, 'the item id is empty');
    const statement = record[fields.statement];
    if (statement === undefined || statement === null) throw problem(path, line, fields.statement, 'missing (the Lean statement)');
    if (typeof statement !== 'string') throw problem(path, line, fields.statement, `the statement is ${typeOf(statement)}, not a string`);
    if (statement.length > SCREEN_LIMITS.maxChars)
      throw problem(
        path,
        line,
        fields.statement,
        `${statement.length} characters, more than the screen admits (${SCREEN_LIMITS.maxChars}); shorten it or leave the line out`,
      );
    let sample = 0;
    if (fields.sample !== undefined) {
      const s = record[fields.sample];
      if (s === undefined || s === null) throw problem(path, line, fields.sample, 'missing (the sample index)');
      if (typeof s !== 'number' || !Number.isInteger(s) || s < 0)
        throw problem(path, line, fields.sample, 'the sample index is not a whole number ≥ 0');
      if (s >= options.samples)
        throw problem(
          path,
          line,
          fields.sample,
          `sample ${s} is out of range: the sweep has samples: ${options.samples} (indexes 0–${options.samples - 1})`,
        );
      sample = s;
    }
    const key = `${id}\u0000${sample}`;
    const first = lineOf.get(key);
    if (first !== undefined) throw problem(path, line, fields.id, `the item and sample ${sample} repeat line ${first}`, `item "${id}"`);
    lineOf.set(key, line);
    if (!wanted.has(id)) {
      ignored.lines++;
      ignored.firstLine ??= line;
      continue;
    }
    entries.push({ item: id, sample, statement });
  }
  if (entries.length === 0)
    throw new PredictionsError(path, {
      problem: `no line names an item of the sweep's benchmark selection (item ids are read from the field "${fields.id}")`,
    });
  return { sha256, entries, ignored };
}

/** What a JSON value is, with its article: `a number`, `an object`, `a list`. */
function typeOf(v: unknown): string {
  return Array.isArray(v) ? 'a list' : typeof v === 'object' ? 'an object' : `a ${typeof v}`;
}

/** The note on lines ignored for naming items outside the selection, or null. */
export function ignoredNote(set: PredictionSet, name: string): string | null {
  if (set.ignored.lines === 0) return null;
  return `${name}: ${set.ignored.lines} line${set.ignored.lines === 1 ? '' : 's'} name items outside the sweep's selection and are ignored (the first: line ${set.ignored.firstLine})`;
}

/** Reads the file of every predictions configuration of a sweep, by configuration name. */
export async function readSweepPredictions(
  configurations: readonly { name: string; predictions?: PredictionsSource }[],
  options: ReadPredictionsOptions,
): Promise<Map<string, PredictionSet>> {
  const out = new Map<string, PredictionSet>();
  for (const c of configurations) if (c.predictions) out.set(c.name, await readPredictions(c.predictions, options));
  return out;
}
