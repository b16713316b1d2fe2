// The OpenAI Batch API, as driftline uses it: upload a JSONL file of chat-completions requests,
// create a batch over it, read its state, read its output and error files back line by line, and
// cancel it. Over the official `openai` SDK (no retries of its own: Temporal retries). Submission
// is idempotent per flush: the batch carries the flush's ID in its metadata, and a flush that
// comes again (a worker killed after the batch was created) finds its batch instead of paying
// for the same requests twice. Everything the provider sends is checked and bounded; errors name
// what was wrong, never the files' contents.
import OpenAI, { toFile } from 'openai';
import { LLM_FAILURE } from '../../common/failures';
import { BATCH_COMPLETION_WINDOW, PROVIDER_BATCH_STATUSES, batchEnded, type ProviderBatchStatus } from '../../common/llm-batch';
import { EngineError } from '../errors';
import { classifyApiError } from './api-errors';
import { toLlmError } from './errors';

export interface BatchRequestLine {
  customId: string;
  /** A chat.completions request body. */
  body: Record<string, unknown>;
}

export interface SubmittedBatch {
  id: string;
  status: ProviderBatchStatus;
  /** ISO time the provider created the batch. */
  createdAt: string;
}

export interface BatchState {
  id: string;
  status: ProviderBatchStatus;
  total: number;
  completed: number;
  failed: number;
  outputFileId?: string;
  errorFileId?: string;
}

export type BatchLineResult =
  /** `body`: the chat.completion JSON text, as a synchronous call would have received it. */
  | { customId: string; ok: true; body: string }
  /** `error`: a short reason (a status, a code, a bounded message), never file contents. */
  | { customId: string; ok: false; error: string };

export interface BatchApiOptions {
  baseURL: string;
  apiKey?: string;
  fetch?: typeof fetch;
  /** Each request to the provider, a file's download included. */
  timeoutMs: number;
  /** The largest output or error file read; default 128 MiB. */
  maxFileBytes?: number;
  /** The longest line of those files; default 4 MiB. */
  maxLineBytes?: number;
  /** Pages of 100 batches searched for a flush already submitted; default 10. */
  maxListPages?: number;
}

/** The metadata key that ties a batch to the flush that created it. */
export const FLUSH_METADATA_KEY = 'driftline_flush';
const ENDPOINT = '/v1/chat/completions';
/** The Batch API's own limits on one input file. */
const MAX_REQUESTS = 50_000;
const MAX_INPUT_BYTES = 200 * 1024 * 1024;
/** A metadata value's limit at the provider. */
const MAX_FLUSH_ID = 512;
const MAX_CUSTOM_ID = 512;
/** IDs go into URL paths: only what real providers use. */
const SAFE_ID = /^[A-Za-z0-9_.:-]{1,200}$/;
const CODE = /^[A-Za-z0-9_.:-]{1,64}$/;
const MAX_REASON = 200;

/** The provider's batch object, checked. */
interface ProviderBatch {
  id: string;
  status: ProviderBatchStatus;
  createdAt: number;
  total: number;
  completed: number;
  failed: number;
  outputFileId?: string;
  errorFileId?: string;
  /** The first error code of a batch that failed (`errors.data[0].code`), when readable. */
  errorCode?: string;
}

type Json = Record<string, unknown>;

const isObject = (v: unknown): v is Json => typeof v === 'object' && v !== null && !Array.isArray(v);

/** A provider's short code, when it is one; anything else is left out of messages. */
function codeOf(v: unknown): string | undefined {
  return typeof v === 'string' && CODE.test(v) ? v : undefined;
}

/** A provider's message made safe to show: one line, no control characters, bounded. */
function boundedMessage(v: unknown): string | undefined {
  if (typeof v !== 'string') return undefined;
  const text = v
    .slice(0, MAX_REASON * 2)
    .replace(/[\p{Cc}\p{Cf}]+/gu, ' ')
    .replace(/\s+/g, ' ')
    .trim();
  if (text === '') return undefined;
  return text.length > MAX_REASON ? `${text.slice(0, MAX_REASON)}…` : text;
}

function badReply(message: string): EngineError {
  return new EngineError(LLM_FAILURE.badReply, message);
}

function badRequest(message: string): EngineError {
  return new EngineError(LLM_FAILURE.badRequest, message);
}

export class BatchApi {
  private readonly openai: OpenAI;
  private readonly maxFileBytes: number;
  private readonly maxLineBytes: number;
  private readonly maxListPages: number;

  constructor(private readonly opts: BatchApiOptions) {
    this.openai = new OpenAI({
      baseURL: opts.baseURL,
      // Local servers need no key, but the SDK insists on one (and would read the environment).
      apiKey: opts.apiKey || 'no-key',
      organization: null,
      project: null,
      // Retries are Temporal's.
      maxRetries: 0,
      timeout: opts.timeoutMs,
      ...(opts.fetch ? { fetch: opts.fetch } : {}),
    });
    this.maxFileBytes = opts.maxFileBytes ?? 128 * 1024 * 1024;
    this.maxLineBytes = opts.maxLineBytes ?? 4 * 1024 * 1024;
    this.maxListPages = opts.maxListPages ?? 10;
  }

  /** Idempotent submission: first looks for a batch this flush already created (metadata
   * `driftline_flush` === flushId, searching the provider's batch list newest first, bounded
   * pages), and returns it; otherwise uploads the JSONL (purpose batch) and creates the batch with
   * that metadata. A batch created beyond the pages searched would be created again. */
  async submit(flushId: string, lines: BatchRequestLine[]): Promise<SubmittedBatch> {
    const jsonl = inputFile(flushId, lines);
    const found = await this.findFlush(flushId);
    if (found) return submitted(found);
    const name = `driftline-${flushId.replace(/[^A-Za-z0-9_.-]+/g, '_').slice(0, 100)}.jsonl`;
    const file = await this.call('uploading the batch file', async () =>
      this.openai.files.create({ file: await toFile(Buffer.from(jsonl, 'utf8'), name, { type: 'application/jsonl' }), purpose: 'batch' }),
    );
    const fileId = isObject(file) ? file.id : undefined;
    if (typeof fileId !== 'string' || !SAFE_ID.test(fileId))
      throw badReply(`${this.where('uploading the batch file')} answered without a readable file ID`);
    const batch = await this.call('creating the batch', () =>
      this.openai.batches.create({
        input_file_id: fileId,
        endpoint: ENDPOINT,
        completion_window: BATCH_COMPLETION_WINDOW,
        metadata: { [FLUSH_METADATA_KEY]: flushId },
      }),
    );
    return submitted(this.readBatch(batch, 'creating the batch'));
  }

  async state(batchId: string): Promise<BatchState> {
    const b = await this.retrieve(batchId);
    return {
      id: b.id,
      status: b.status,
      total: b.total,
      completed: b.completed,
      failed: b.failed,
      ...(b.outputFileId ? { outputFileId: b.outputFileId } : {}),
      ...(b.errorFileId ? { errorFileId: b.errorFileId } : {}),
    };
  }

  /** The ended batch's lines: output file lines with status_code 200 are ok; error-file lines and
   * non-200 lines are not ok. Lines for custom_ids not in `expected` are ignored; expected ids
   * absent from both files come back not ok ("no answer in the batch"). Where the provider sent
   * one custom_id twice, an answer wins over an error, and the first answer over a later one. */
  async results(batchId: string, expected: string[]): Promise<BatchLineResult[]> {
    const batch = await this.retrieve(batchId);
    if (!batchEnded(batch.status)) {
      // The provider may be a moment behind what it said before: a later retry can read them.
      throw new EngineError(
        LLM_FAILURE.unavailable,
        `Batch ${batchId} at ${this.opts.baseURL} is ${batch.status}, not ended: its results cannot be read yet`,
      );
    }
    const wanted = new Set(expected);
    const found = new Map<string, BatchLineResult>();
    for (const [fileId, which] of [
      [batch.outputFileId, 'output'],
      [batch.errorFileId, 'error'],
    ] as const) {
      if (!fileId) continue;
      const text = await this.download(fileId, `the ${which} file of batch ${batchId}`);
      for (const result of this.readLines(text, `the ${which} file of batch ${batchId}`)) {
        if (!wanted.has(result.customId)) continue;
        const before = found.get(result.customId);
        if (!before || (!before.ok && result.ok)) found.set(result.customId, result);
      }
    }
    const why = batch.status === 'completed' ? '' : ` (batch ${batch.status}${batch.errorCode ? `: ${batch.errorCode}` : ''})`;
    return expected.map((customId) => found.get(customId) ?? { customId, ok: false, error: `no answer in the batch${why}` });
  }

  /** Cancels the batch at the provider; a batch already ended or cancelling is left as it is. */
  async cancel(batchId: string): Promise<void> {
    checkId(batchId, 'batch');
    try {
      await this.openai.batches.cancel(batchId);
    } catch (err) {
      // A provider refuses to cancel a batch that has ended: that is what was wanted.
      if (classifyApiError(err).kind === 'refused') {
        const now = await this.retrieve(batchId);
        if (batchEnded(now.status) || now.status === 'cancelling') return;
      }
      throw this.failure(err, `cancelling batch ${batchId}`);
    }
  }

  // ---- the provider's answers, checked ----

  private async retrieve(batchId: string): Promise<ProviderBatch> {
    checkId(batchId, 'batch');
    const what = `reading batch ${batchId}`;
    return this.readBatch(await this.call(what, () => this.openai.batches.retrieve(batchId)), what);
  }

  /** The provider's newest batches, page by page up to the bound, for the one this flush made. */
  private async findFlush(flushId: string): Promise<ProviderBatch | undefined> {
    const what = 'listing batches';
    let page = await this.call(what, () => this.openai.batches.list({ limit: 100 }));
    for (let i = 0; ; i++) {
      if (!Array.isArray(page.data)) throw badReply(`${this.where(what)} answered without a list of batches`);
      for (const item of page.data as unknown[]) {
        if (isObject(item) && isObject(item.metadata) && item.metadata[FLUSH_METADATA_KEY] === flushId) return this.readBatch(item, what);
      }
      if (i + 1 >= this.maxListPages || !page.hasNextPage()) return undefined;
      const current = page;
      page = await this.call(what, () => current.getNextPage());
    }
  }

  private readBatch(value: unknown, what: string): ProviderBatch {
    const where = this.where(what);
    if (!isObject(value)) throw badReply(`${where} answered with something that is not a batch object`);
    const { id, status, created_at: createdAt } = value;
    if (typeof id !== 'string' || !SAFE_ID.test(id)) throw badReply(`${where} answered with a batch without a readable ID`);
    if (typeof status !== 'string' || !(PROVIDER_BATCH_STATUSES as readonly string[]).includes(status)) {
      const shown = codeOf(status);
      throw badReply(
        `${where} answered that batch ${id} has ${shown ? `status "${shown}", which is not a Batch API status` : 'no readable status'} ` +
          `(known: ${PROVIDER_BATCH_STATUSES.join(', ')})`,
      );
    }
    if (typeof createdAt !== 'number' || !Number.isFinite(createdAt) || createdAt < 0)
      throw badReply(`${where} answered batch ${id} without a creation time`);
    const counts = value.request_counts ?? {};
    if (!isObject(counts)) throw badReply(`${where} answered batch ${id} with unreadable request counts`);
    const count = (name: string): number => {
      const n = counts[name] ?? 0;
      if (typeof n !== 'number' || !Number.isSafeInteger(n) || n < 0)
        throw badReply(`${where} answered batch ${id} with an unreadable ${name} count`);
      return n;
    };
    const fileId = (name: string): string | undefined => {
      const v = value[name];
      if (v === undefined || v === null || v === '') return undefined;
      if (typeof v !== 'string' || !SAFE_ID.test(v)) throw badReply(`${where} answered batch ${id} with an unreadable ${name}`);
      return v;
    };
    const errors = isObject(value.errors) && Array.isArray(value.errors.data) ? (value.errors.data as unknown[]) : [];
    const errorCode = codeOf(isObject(errors[0]) ? errors[0].code : undefined);
    const outputFileId = fileId('output_file_id');
    const errorFileId = fileId('error_file_id');
    return {
      id,
      status: status as ProviderBatchStatus,
      createdAt,
      total: count('total'),
      completed: count('completed'),
      failed: count('failed'),
      ...(outputFileId ? { outputFileId } : {}),
      ...(errorFileId ? { errorFileId } : {}),
      ...(errorCode ? { errorCode } : {}),
    };
  }

  /** A file's text, refused over the size limit (told by its length or found while reading). */
  private async download(fileId: string, what: string): Promise<string> {
    const deadline = new AbortController();
    const timer = setTimeout(() => deadline.abort(), this.opts.timeoutMs);
    try {
      const response = await this.call(`reading ${what}`, () => this.openai.files.content(fileId, { signal: deadline.signal }));
      const tooLarge = () =>
        badReply(
          `${what} at ${this.opts.baseURL} is larger than the ${this.maxFileBytes} bytes driftline reads; it was not read (a batch holds fewer requests, or raise maxFileBytes)`,
        );
      const declared = Number(response.headers.get('content-length') ?? NaN);
      if (declared > this.maxFileBytes) {
        await response.body?.cancel().catch(() => {});
        throw tooLarge();
      }
      if (!response.body) return '';
      const chunks: Uint8Array[] = [];
      let size = 0;
      const reader = response.body.getReader();
      for (;;) {
        const { done, value } = await reader.read();
        if (done) break;
        size += value.byteLength;
        if (size > this.maxFileBytes) {
          await reader.cancel().catch(() => {});
          throw tooLarge();
        }
        chunks.push(value);
      }
      try {
        return new TextDecoder('utf-8', { fatal: true }).decode(Buffer.concat(chunks));
      } catch {
        throw badReply(`${what} at ${this.opts.baseURL} is not UTF-8 text`);
      }
    } catch (err) {
      if (deadline.signal.aborted && !(err instanceof EngineError)) {
        throw new EngineError(
          LLM_FAILURE.unavailable,
          `Reading ${what} at ${this.opts.baseURL} took longer than ${this.opts.timeoutMs} ms`,
          { cause: err },
        );
      }
      throw err;
    } finally {
      clearTimeout(timer);
    }
  }

  /** The lines of an output or error file, each checked; a line that is not a batch result
   * makes the file unreadable (no custom_id can be trusted from it). */
  private readLines(text: string, what: string): BatchLineResult[] {
    const results: BatchLineResult[] = [];
    const lines = text.split('\n');
    for (let i = 0; i < lines.length; i++) {
      const line = lines[i]!;
      if (line.trim() === '') continue;
      const at = `line ${i + 1} of ${what}`;
      if (Buffer.byteLength(line, 'utf8') > this.maxLineBytes) throw badReply(`${at} is longer than ${this.maxLineBytes} bytes`);
      let row: unknown;
      try {
        row = JSON.parse(line);
      } catch {
        throw badReply(`${at} is not JSON`);
      }
      if (!isObject(row)) throw badReply(`${at} is not a JSON object`);
      const { custom_id: customId, response, error } = row;
      if (typeof customId !== 'string' || customId === '' || customId.length > MAX_CUSTOM_ID)
        throw badReply(`${at} has no readable custom_id`);
      if (response !== null && response !== undefined && !isObject(response)) throw badReply(`${at} has a response that is not an object`);
      if (error !== null && error !== undefined && !isObject(error)) throw badReply(`${at} has an error that is not an object`);
      results.push(lineResult(customId, response ?? null, error ?? null, at));
    }
    return results;
  }

  // ---- errors ----

  private where(what: string): string {
    return `The Batch API at ${this.opts.baseURL} (${what})`;
  }

  private async call<T>(what: string, request: () => Promise<T>): Promise<T> {
    try {
      return await request();
    } catch (err) {
      throw this.failure(err, what);
    }
  }

  /** An SDK error as an EngineError of the LLM client's types: 429 and 5xx retryable, other
   * refusals not. */
  private failure(err: unknown, what: string): unknown {
    if (err instanceof EngineError) return err;
    // The SDK parses a body that says it is JSON; one that is not comes back as a SyntaxError.
    if (err instanceof SyntaxError) return badReply(`${this.where(what)} answered with a body that is not JSON`);
    return toLlmError(err, {
      model: '',
      baseURL: this.opts.baseURL,
      timeoutMs: this.opts.timeoutMs,
      where: `the Batch API at ${this.opts.baseURL} (${what})`,
    });
  }
}

/** One result line read: an answer (200 with a chat completion) or the reason there is none. */
function lineResult(customId: string, response: Json | null, error: Json | null, at: string): BatchLineResult {
  if (response) {
    const status = response.status_code;
    if (typeof status !== 'number' || !Number.isInteger(status)) throw badReply(`${at} has a response without a status code`);
    const body = response.body;
    if (status === 200) {
      if (isObject(body) && Array.isArray(body.choices)) return { customId, ok: true, body: JSON.stringify(body) };
      return { customId, ok: false, error: 'HTTP 200 without a chat completion in the body' };
    }
    const inner = isObject(body) && isObject(body.error) ? body.error : undefined;
    const code = codeOf(inner?.code) ?? codeOf(inner?.type);
    const message = boundedMessage(inner?.message);
    return { customId, ok: false, error: `HTTP ${status}${code ? ` (${code})` : ''}${message ? `: ${message}` : ''}` };
  }
  if (error) {
    const code = codeOf(error.code);
    const message = boundedMessage(error.message);
    return { customId, ok: false, error: [code, message].filter(Boolean).join(': ') || 'an error without a reason' };
  }
  return { customId, ok: false, error: 'neither a response nor an error' };
}

function checkId(id: string, what: string): void {
  if (!SAFE_ID.test(id)) throw badRequest(`Not a ${what} ID: it must be 1 to 200 letters, digits or _ . : -`);
}

function submitted(b: ProviderBatch): SubmittedBatch {
  return { id: b.id, status: b.status, createdAt: new Date(b.createdAt * 1000).toISOString() };
}

/** The JSONL input file for the lines, after the checks the provider would make. */
function inputFile(flushId: string, lines: BatchRequestLine[]): string {
  if (flushId === '' || flushId.length > MAX_FLUSH_ID) throw badRequest(`A flush ID must be 1 to ${MAX_FLUSH_ID} characters`);
  if (lines.length === 0) throw badRequest('A batch needs at least one request');
  if (lines.length > MAX_REQUESTS) throw badRequest(`A batch holds at most ${MAX_REQUESTS} requests; this one has ${lines.length}`);
  const seen = new Set<string>();
  const rows: string[] = [];
  let bytes = 0;
  for (const { customId, body } of lines) {
    if (customId === '' || customId.length > MAX_CUSTOM_ID) throw badRequest(`A custom_id must be 1 to ${MAX_CUSTOM_ID} characters`);
    if (seen.has(customId)) throw badRequest(`custom_id ${JSON.stringify(customId.slice(0, 100))} appears twice in one batch`);
    seen.add(customId);
    if (!isObject(body)) throw badRequest(`The request of ${JSON.stringify(customId.slice(0, 100))} is not an object`);
    const row = JSON.stringify({ custom_id: customId, method: 'POST', url: ENDPOINT, body });
    bytes += Buffer.byteLength(row, 'utf8') + 1;
    if (bytes > MAX_INPUT_BYTES) throw badRequest(`A batch file may be at most ${MAX_INPUT_BYTES} bytes; these requests are more`);
    rows.push(row);
  }
  return rows.join('\n') + '\n';
}
