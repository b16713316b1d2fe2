// The OpenAI Batch API in the fake server: `/v1/files` (upload with purpose `batch`, retrieve,
// content) and `/v1/batches` (create, retrieve, list newest first, cancel). A batch moves through
// validating → in_progress → finalizing → completed within a short configurable delay, and each
// of its lines is answered by whatever answers a synchronous chat completion (the caller's
// `answer`), so a batch says what the same calls would have said one at a time. Failed, expired
// and partly failed batches come on demand, and every custom_id's submissions are counted, so a
// test can tell a resubmission after an error from a request sent twice.
import { randomBytes } from 'node:crypto';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { BodyTooLarge, errorBody, readBodyBytes, readBody, sendError, sendJson } from './fake-http';

/** What goes wrong with the next batch created (`failNext`, or `faults` in the options).
 * `failed`: the batch fails in validation (the real API's `token_limit_exceeded`), nothing runs.
 * `expired`: the completion window ends with `lines` lines (default half, at least one) not done;
 * they come back in the error file with code `batch_expired`.
 * `partial`: the batch completes, but its first `lines` lines (default 1) come back in the error
 * file with HTTP 500. */
export type FakeBatchFault = { kind: 'failed' } | { kind: 'expired'; lines?: number } | { kind: 'partial'; lines?: number };

export interface FakeBatchOptions {
  /** Time from creation to completed (validating a quarter, in progress half, finalizing a
   * quarter); default 300 ms. */
  delayMs?: number;
  /** Faults for the first batches created, in order. */
  faults?: FakeBatchFault[];
}

/** What a chat-completions body is answered with: the status and the JSON body a synchronous
 * call would have got. */
export interface LineAnswer {
  statusCode: number;
  body: unknown;
}

/** What the fake counts of batch submissions. */
export interface FakeBatchCounts {
  /** Batches created (those refused at creation aside). */
  batchesCreated: number;
  /** Request lines of each batch created, in order of creation. */
  linesPerBatch: number[];
  /** Files uploaded with purpose `batch`. */
  filesUploaded: number;
  /** How often each custom_id was submitted in a batch that passed validation. */
  submissions: Record<string, number>;
  /** Distinct custom_ids submitted. */
  firstSubmissions: number;
  /** Submissions of a custom_id whose earlier submission came back failed (error file, expired,
   * failed or cancelled batch). */
  resubmissions: number;
  /** Submissions of a custom_id already answered, or still in flight: requests paid twice. */
  duplicateSubmissions: number;
  /** The custom_ids of the duplicate submissions. */
  duplicates: string[];
}

type BatchStatus = 'validating' | 'in_progress' | 'finalizing' | 'completed' | 'failed' | 'expired' | 'cancelling' | 'cancelled';

interface FileRecord {
  object: Record<string, unknown> & { id: string; purpose: string };
  content: Buffer;
}

interface InputLine {
  custom_id: string;
  body: Record<string, unknown>;
}

interface BatchError {
  code: string;
  message: string;
  param: string | null;
  line: number | null;
}

interface BatchRecord {
  wire: Record<string, unknown> & {
    id: string;
    status: BatchStatus;
    request_counts: { total: number; completed: number; failed: number };
    usage: { input_tokens: number; output_tokens: number; total_tokens: number } & Record<string, unknown>;
  };
  lines: InputLine[];
  /** Validation problems found at creation: the batch fails when validation ends. */
  problems: BatchError[];
  fault?: FakeBatchFault;
  cancelRequested: boolean;
  output: string[];
  errors: string[];
}

const FILE_PURPOSES = ['assistants', 'batch', 'fine-tune', 'vision', 'user_data', 'evals'];
const MAX_BATCH_LINES = 50_000;
/** What the fake takes in one upload (the real API: 200 MB for batch files). */
const MAX_UPLOAD_BYTES = 200 * 1024 * 1024;
const DAY_S = 24 * 3600;

const now = () => Math.floor(Date.now() / 1000);
const hex = (bytes: number) => randomBytes(bytes).toString('hex');

/** Why a metadata object would be refused (the real limits: 16 pairs, keys 64 and values 512
 * characters), or null. */
function metadataProblem(metadata: unknown): string | null {
  if (metadata === undefined || metadata === null) return null;
  if (typeof metadata !== 'object' || Array.isArray(metadata)) return "'metadata' must be an object";
  const entries = Object.entries(metadata);
  if (entries.length > 16) return "'metadata' may have at most 16 keys";
  for (const [k, v] of entries) {
    if (k.length > 64) return "'metadata' keys may be at most 64 characters";
    if (typeof v !== 'string' || v.length > 512) return "'metadata' values must be strings of at most 512 characters";
  }
  return null;
}

/** The batch input file's lines, checked as the real API's validation does; problems end the
 * batch `failed` with them in `errors`. */
function readInput(content: Buffer, endpoint: string): { lines: InputLine[]; problems: BatchError[] } {
  const lines: InputLine[] = [];
  const problems: BatchError[] = [];
  const seen = new Set<string>();
  const texts = content.toString('utf8').split('\n');
  texts.forEach((text, i) => {
    if (text.trim() === '') return;
    const line = i + 1;
    const problem = (code: string, message: string, param: string | null) => problems.push({ code, message, param, line });
    const row = JSON.parse(text) as Record<string, unknown>; // upload already checked it is a JSON object
    const id = row.custom_id;
    if (typeof id !== 'string' || id === '') return problem('missing_required_parameter', 'custom_id is required', 'custom_id');
    if (seen.has(id)) {
      return problem(
        'duplicate_custom_id',
        'The custom_id for this request is a duplicate of another request. The custom_id parameter must be unique for each request in a batch.',
        'custom_id',
      );
    }
    seen.add(id);
    if (row.method !== 'POST') return problem('invalid_method', 'method must be POST', 'method');
    if (row.url !== endpoint) return problem('mismatched_endpoint', `url must be the batch's endpoint ${endpoint}`, 'url');
    const body = row.body;
    if (!body || typeof body !== 'object' || Array.isArray(body)) return problem('invalid_body', 'body must be an object', 'body');
    if (typeof (body as Record<string, unknown>).model !== 'string')
      return problem('missing_required_parameter', 'body.model is required', 'body.model');
    lines.push({ custom_id: id, body: body as Record<string, unknown> });
  });
  if (lines.length + problems.length === 0)
    problems.push({ code: 'empty_file', message: 'The input file has no requests', param: null, line: null });
  if (lines.length > MAX_BATCH_LINES) {
    problems.push({ code: 'too_many_requests', message: `A batch may have at most ${MAX_BATCH_LINES} requests`, param: null, line: null });
  }
  return { lines, problems };
}

export class FakeBatches {
  private readonly files = new Map<string, FileRecord>();
  /** Newest last. */
  private readonly batches: BatchRecord[] = [];
  private readonly byId = new Map<string, BatchRecord>();
  private readonly faults: FakeBatchFault[];
  private delayMs: number;
  private closed = false;
  private readonly timers = new Set<{ timer: NodeJS.Timeout; resolve: () => void }>();
  /** Where each custom_id stands after its last submission. */
  private readonly lineState = new Map<string, 'inFlight' | 'answered' | 'failed'>();
  private readonly counts: FakeBatchCounts = {
    batchesCreated: 0,
    linesPerBatch: [],
    filesUploaded: 0,
    submissions: {},
    firstSubmissions: 0,
    resubmissions: 0,
    duplicateSubmissions: 0,
    duplicates: [],
  };

  constructor(
    opts: FakeBatchOptions,
    /** Answers one line's body as a synchronous call would be answered (`batch`: the batch's ID). */
    private readonly answer: (body: Record<string, unknown>, batch: string) => Promise<LineAnswer>,
  ) {
    this.delayMs = opts.delayMs ?? 300;
    this.faults = [...(opts.faults ?? [])];
  }

  /** The next batch created meets this fault (queued after earlier ones). */
  failNext(fault: FakeBatchFault): void {
    this.faults.push(fault);
  }

  /** Batches created from now on take this long. */
  setDelay(ms: number): void {
    this.delayMs = ms;
  }

  /** A copy of the counts. */
  stats(): FakeBatchCounts {
    return structuredClone(this.counts);
  }

  /** The batch objects, newest first, as the list endpoint sends them. */
  all(): Array<Record<string, unknown>> {
    return this.batches.map((b) => structuredClone(b.wire)).reverse();
  }

  close(): void {
    this.closed = true;
    for (const t of this.timers) {
      clearTimeout(t.timer);
      t.resolve();
    }
    this.timers.clear();
  }

  /** Serves a files or batches route; false when the path is none of them. */
  async route(req: IncomingMessage, res: ServerResponse, method: string, path: string, query: URLSearchParams): Promise<boolean> {
    let m: RegExpExecArray | null;
    if (method === 'POST' && path === '/v1/files') await this.upload(req, res);
    else if (method === 'GET' && (m = /^\/v1\/files\/([^/]+)$/.exec(path))) this.retrieveFile(res, m[1]!);
    else if (method === 'GET' && (m = /^\/v1\/files\/([^/]+)\/content$/.exec(path))) this.fileContent(res, m[1]!);
    else if (method === 'POST' && path === '/v1/batches') await this.create(req, res);
    else if (method === 'GET' && path === '/v1/batches') this.list(res, query);
    else if (method === 'GET' && (m = /^\/v1\/batches\/([^/]+)$/.exec(path))) this.retrieve(res, m[1]!);
    else if (method === 'POST' && (m = /^\/v1\/batches\/([^/]+)\/cancel$/.exec(path))) this.cancel(res, m[1]!);
    else return false;
    return true;
  }

  // ---- files ----

  private async upload(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const type = req.headers['content-type'] ?? '';
    if (!type.startsWith('multipart/form-data')) return sendError(res, 400, 'The request must be multipart/form-data');
    let form: FormData;
    try {
      const bytes = await readBodyBytes(req, MAX_UPLOAD_BYTES + 1024 * 1024);
      form = await new Response(new Uint8Array(bytes), { headers: { 'content-type': type } }).formData();
    } catch (err) {
      if (err instanceof BodyTooLarge) return sendError(res, 413, 'File too large: batch files may be at most 200 MB');
      return sendError(res, 400, 'The multipart body could not be read');
    }
    const purpose = form.get('purpose');
    const file = form.get('file');
    if (purpose === null)
      return sendError(res, 400, "Missing required parameter: 'purpose'.", {}, { param: 'purpose', code: 'missing_required_parameter' });
    if (typeof purpose !== 'string' || !FILE_PURPOSES.includes(purpose)) {
      return sendError(
        res,
        400,
        `Invalid value for 'purpose': expected one of ${FILE_PURPOSES.join(', ')}.`,
        {},
        { param: 'purpose', code: 'invalid_value' },
      );
    }
    if (file === null || typeof file === 'string') {
      return sendError(res, 400, "Missing required parameter: 'file'.", {}, { param: 'file', code: 'missing_required_parameter' });
    }
    const content = Buffer.from(await file.arrayBuffer());
    if (purpose === 'batch') {
      if (!file.name.endsWith('.jsonl'))
        return sendError(res, 400, 'Invalid file format for Batch API. Must be .jsonl', {}, { param: 'file' });
      if (content.length > MAX_UPLOAD_BYTES) return sendError(res, 413, 'File too large: batch files may be at most 200 MB');
      const bad = content
        .toString('utf8')
        .split('\n')
        .findIndex((text) => {
          if (text.trim() === '') return false;
          try {
            const row: unknown = JSON.parse(text);
            return !row || typeof row !== 'object' || Array.isArray(row);
          } catch {
            return true;
          }
        });
      if (bad >= 0) {
        return sendError(
          res,
          400,
          `Invalid file format for Batch API: line ${bad + 1} is not a JSON object.`,
          {},
          { param: 'file', code: 'invalid_file_format' },
        );
      }
      this.counts.filesUploaded++;
    }
    const record = this.storeFile(content, file.name, purpose);
    sendJson(res, 200, record.object);
  }

  private storeFile(content: Buffer, filename: string, purpose: string): FileRecord {
    const created = now();
    const record: FileRecord = {
      object: {
        id: `file-${hex(12)}`,
        object: 'file',
        bytes: content.length,
        created_at: created,
        filename,
        purpose,
        status: 'processed',
        status_details: null,
        ...(purpose === 'batch' || purpose === 'batch_output' ? { expires_at: created + 30 * DAY_S } : {}),
      },
      content,
    };
    this.files.set(record.object.id, record);
    return record;
  }

  private retrieveFile(res: ServerResponse, id: string): void {
    const file = this.files.get(id);
    if (!file) return sendError(res, 404, `No such File object: ${id}`, {}, { param: 'id' });
    sendJson(res, 200, file.object);
  }

  private fileContent(res: ServerResponse, id: string): void {
    const file = this.files.get(id);
    if (!file) return sendError(res, 404, `No such File object: ${id}`, {}, { param: 'id' });
    res.writeHead(200, { 'content-type': 'application/octet-stream', 'content-length': String(file.content.length) });
    res.end(file.content);
  }

  // ---- batches ----

  private async create(req: IncomingMessage, res: ServerResponse): Promise<void> {
    let body: Record<string, unknown>;
    try {
      body = JSON.parse(await readBody(req)) as Record<string, unknown>;
    } catch {
      return sendError(res, 400, 'Request body is not valid JSON');
    }
    if (!body || typeof body !== 'object') return sendError(res, 400, 'Request body must be a JSON object');
    const { input_file_id: fileId, endpoint, completion_window: window, metadata } = body;
    if (typeof fileId !== 'string')
      return sendError(res, 400, "Missing required parameter: 'input_file_id'.", {}, { param: 'input_file_id' });
    const file = this.files.get(fileId);
    if (!file) return sendError(res, 404, `No such File object: ${fileId}`, {}, { param: 'input_file_id' });
    if (file.object.purpose !== 'batch')
      return sendError(res, 400, "The input file must be uploaded with purpose 'batch'.", {}, { param: 'input_file_id' });
    // The real API serves more endpoints; the fake answers chat completions only.
    if (endpoint !== '/v1/chat/completions')
      return sendError(res, 400, "Invalid value for 'endpoint': the fake serves /v1/chat/completions.", {}, { param: 'endpoint' });
    if (window !== '24h')
      return sendError(res, 400, "Invalid value for 'completion_window': only '24h' is supported.", {}, { param: 'completion_window' });
    const metadataIssue = metadataProblem(metadata);
    if (metadataIssue) return sendError(res, 400, metadataIssue, {}, { param: 'metadata' });

    const { lines, problems } = readInput(file.content, endpoint);
    const created = now();
    const model = lines.find((l) => typeof l.body.model === 'string')?.body.model;
    const batch: BatchRecord = {
      wire: {
        id: `batch_${hex(16)}`,
        object: 'batch',
        endpoint,
        model: typeof model === 'string' ? model : undefined,
        errors: null,
        input_file_id: fileId,
        completion_window: window,
        status: 'validating',
        output_file_id: null,
        error_file_id: null,
        created_at: created,
        in_progress_at: null,
        expires_at: created + DAY_S,
        finalizing_at: null,
        completed_at: null,
        failed_at: null,
        expired_at: null,
        cancelling_at: null,
        cancelled_at: null,
        request_counts: { total: 0, completed: 0, failed: 0 },
        // The tokens of the lines answered (the real API reports them for batches since 2025).
        usage: {
          input_tokens: 0,
          input_tokens_details: { cached_tokens: 0 },
          output_tokens: 0,
          output_tokens_details: { reasoning_tokens: 0 },
          total_tokens: 0,
        },
        metadata: (metadata as Record<string, string> | undefined) ?? null,
      },
      lines,
      problems,
      cancelRequested: false,
      output: [],
      errors: [],
    };
    if (problems.length === 0) {
      const fault = this.faults.shift();
      if (fault) batch.fault = fault;
      this.countSubmissions(lines);
    }
    this.batches.push(batch);
    this.byId.set(batch.wire.id, batch);
    this.counts.batchesCreated++;
    this.counts.linesPerBatch.push(lines.length);
    sendJson(res, 200, batch.wire);
    void this.run(batch).catch(() =>
      this.end(batch, 'failed', [{ code: 'server_error', message: 'The fake failed', param: null, line: null }]),
    );
  }

  private countSubmissions(lines: InputLine[]): void {
    const c = this.counts;
    for (const { custom_id: id } of lines) {
      c.submissions[id] = (c.submissions[id] ?? 0) + 1;
      const before = this.lineState.get(id);
      if (before === undefined) c.firstSubmissions++;
      else if (before === 'failed') c.resubmissions++;
      else {
        c.duplicateSubmissions++;
        c.duplicates.push(id);
      }
      this.lineState.set(id, 'inFlight');
    }
  }

  private retrieve(res: ServerResponse, id: string): void {
    const batch = this.byId.get(id);
    if (!batch) return sendError(res, 404, `No batch found with id '${id}'.`, {}, { param: 'batch_id' });
    sendJson(res, 200, batch.wire);
  }

  private list(res: ServerResponse, query: URLSearchParams): void {
    const limitText = query.get('limit');
    const limit = limitText === null ? 20 : Number(limitText);
    if (!Number.isInteger(limit) || limit < 1 || limit > 100) {
      return sendError(res, 400, "Invalid 'limit': must be an integer from 1 to 100.", {}, { param: 'limit' });
    }
    const newestFirst = [...this.batches].reverse();
    const after = query.get('after');
    const start = after === null ? 0 : newestFirst.findIndex((b) => b.wire.id === after) + 1;
    // An unknown cursor gives an empty page rather than starting over.
    const page = after !== null && start === 0 ? [] : newestFirst.slice(start, start + limit);
    sendJson(res, 200, {
      object: 'list',
      data: page.map((b) => b.wire),
      first_id: page[0]?.wire.id ?? null,
      last_id: page.at(-1)?.wire.id ?? null,
      has_more: start + page.length < newestFirst.length && page.length > 0,
    });
  }

  private cancel(res: ServerResponse, id: string): void {
    const batch = this.byId.get(id);
    if (!batch) return sendError(res, 404, `No batch found with id '${id}'.`, {}, { param: 'batch_id' });
    const status = batch.wire.status;
    if (status === 'validating' || status === 'in_progress') {
      batch.cancelRequested = true;
      batch.wire.status = 'cancelling';
      batch.wire.cancelling_at = now();
    } else if (status !== 'cancelling' && status !== 'cancelled') {
      return sendError(res, 400, `Cannot cancel a batch with status '${status}'.`);
    }
    sendJson(res, 200, batch.wire);
  }

  // ---- the batch's life ----

  /** Resolves after `ms`, or at once when the fake closes. */
  private wait(ms: number): Promise<void> {
    if (this.closed) return Promise.resolve();
    return new Promise((resolve) => {
      const entry = {
        resolve,
        timer: setTimeout(() => {
          this.timers.delete(entry);
          resolve();
        }, ms),
      };
      this.timers.add(entry);
    });
  }

  private async run(batch: BatchRecord): Promise<void> {
    const delay = this.delayMs;
    const w = batch.wire;
    await this.wait(delay / 4);
    if (this.closed) return;
    if (batch.problems.length) return this.end(batch, 'failed', batch.problems);
    if (batch.fault?.kind === 'failed') {
      return this.end(batch, 'failed', [
        {
          code: 'token_limit_exceeded',
          message: `Enqueued token limit reached for ${String(w.model)}. Please try again once some in_progress batches have been completed.`,
          param: null,
          line: null,
        },
      ]);
    }
    const n = batch.lines.length;
    if (!batch.cancelRequested) {
      w.status = 'in_progress';
      w.in_progress_at = now();
    }
    w.request_counts.total = n;
    const fault = batch.fault;
    const hit = fault ? Math.min(n, fault.lines ?? (fault.kind === 'expired' ? Math.max(1, Math.floor(n / 2)) : 1)) : 0;
    const runs = fault?.kind === 'expired' ? n - hit : n;
    // The lines are spread over half the delay; a line's turn is a time, not a pause after the
    // one before, so a large batch keeps its pace though timers cannot wait under a millisecond.
    const perLine = delay / 2 / Math.max(n, 1);
    const started = Date.now();
    for (let i = 0; i < runs && !batch.cancelRequested && !this.closed; i++) {
      const line = batch.lines[i]!;
      if (fault?.kind === 'partial' && i < hit) {
        this.write(batch, line, 500, errorBody(500, 'The server had an error while processing your request. Sorry about that!'));
      } else {
        let answer: LineAnswer;
        try {
          answer = await this.answer(line.body, w.id);
        } catch {
          answer = { statusCode: 500, body: errorBody(500, 'The fake failed to answer') };
        }
        this.write(batch, line, answer.statusCode, answer.body);
      }
      const ahead = started + (i + 1) * perLine - Date.now();
      if (ahead >= 1) await this.wait(ahead);
      else if (i % 50 === 49) await new Promise((r) => setImmediate(r)); // let HTTP in (a cancel)
    }
    if (this.closed) return;
    if (batch.cancelRequested) {
      await this.wait(delay / 4);
      return this.end(batch, 'cancelled');
    }
    if (fault?.kind === 'expired') {
      for (const line of batch.lines.slice(runs)) {
        batch.errors.push(
          JSON.stringify({
            id: `batch_req_${hex(12)}`,
            custom_id: line.custom_id,
            response: null,
            error: { code: 'batch_expired', message: 'This request could not be executed before the completion window expired.' },
          }),
        );
        w.request_counts.failed++;
      }
      return this.end(batch, 'expired');
    }
    w.status = 'finalizing';
    w.finalizing_at = now();
    await this.wait(delay / 4);
    if (this.closed) return;
    this.end(batch, 'completed');
  }

  /** One line's answer, to the output file (200) or the error file (any other status). */
  private write(batch: BatchRecord, line: InputLine, statusCode: number, body: unknown): void {
    const text = JSON.stringify({
      id: `batch_req_${hex(12)}`,
      custom_id: line.custom_id,
      response: { status_code: statusCode, request_id: `req_${hex(16)}`, body },
      error: null,
    });
    const ok = statusCode === 200;
    (ok ? batch.output : batch.errors).push(text);
    const usage = ok ? (body as { usage?: { prompt_tokens?: number; completion_tokens?: number } }).usage : undefined;
    if (usage) {
      const u = batch.wire.usage;
      u.input_tokens += usage.prompt_tokens ?? 0;
      u.output_tokens += usage.completion_tokens ?? 0;
      u.total_tokens = u.input_tokens + u.output_tokens;
    }
    batch.wire.request_counts[ok ? 'completed' : 'failed']++;
    this.lineState.set(line.custom_id, ok ? 'answered' : 'failed');
  }

  /** The batch ends: its files are written (only those with lines), its lines not answered
   * count as failed for the next submission. */
  private end(batch: BatchRecord, status: 'completed' | 'failed' | 'expired' | 'cancelled', errors?: BatchError[]): void {
    const w = batch.wire;
    const at = now();
    if (errors) w.errors = { object: 'list', data: errors };
    for (const line of batch.lines) if (this.lineState.get(line.custom_id) === 'inFlight') this.lineState.set(line.custom_id, 'failed');
    const id = w.id;
    if (batch.output.length)
      w.output_file_id = this.storeFile(Buffer.from(batch.output.join('\n') + '\n'), `${id}_output.jsonl`, 'batch_output').object.id;
    if (batch.errors.length)
      w.error_file_id = this.storeFile(Buffer.from(batch.errors.join('\n') + '\n'), `${id}_error.jsonl`, 'batch_output').object.id;
    w.status = status;
    w[`${status}_at`] = at;
  }
}
