// The one typed place for configuration: environment variables over an optional
// `driftline.config.json`, over defaults that run on one machine. Only entry points call this.
import { existsSync, readFileSync } from 'node:fs';
import { isAbsolute, join, resolve } from 'node:path';
import { z } from 'zod';
import { PROJECT_ROOT } from './temporal-cli';
import { parseApiKeys } from '../client/api-keys';
import { PROVIDER_NAME_PATTERN } from '../common/run-config-schema';
import { DEFAULT_MAX_TOKENS, LLM_ROLE_DESCRIPTIONS, LLM_ROLES, type LlmRole } from '../common/llm-roles';
import { envForKey, envSettings, setting, settingPerKey } from './config-env';
import type { LlmCallPolicy } from '../common/llm-call-policy';
import { DEFAULT_BATCH_FACTOR } from '../engines/llm/usage';
import { DEFAULT_MAX_ADDRESS_SPACE_MB, DEFAULT_MAX_PROCESSES, DEFAULT_SANDBOX_UID, refusedEnvName } from '../engines/lean/sandbox';

/** The roles an LLM provider serves: the chat roles of runs (common/llm-roles.ts), the second
 * judge of `driftline eval judge`, and the embedder (its endpoint; DRIFTLINE_EMBEDDER=openai still chooses it). */
export const PROVIDER_ROLES = [...LLM_ROLES, 'judge2', 'embedder'] as const;
export type ProviderRole = (typeof PROVIDER_ROLES)[number];

const PROVIDER_ROLE_DESCRIPTIONS: Record<ProviderRole, string> = {
  ...LLM_ROLE_DESCRIPTIONS,
  judge2: 'judges a second time in `driftline eval judge`',
  embedder: 'embeds premises and queries; `DRIFTLINE_EMBEDDER=openai` still chooses it, this gives it its endpoint and model',
};

/** What a price's `batchFactor` is, said when one is out of range. */
const BATCH_FACTOR_RULE = 'batchFactor is the batch price as a fraction of the synchronous one, a number above 0 and at most 1';

/** JSON from the environment, objects as they are from the config file. */
const jsonSetting = (v: unknown) => {
  if (typeof v !== 'string') return v;
  try {
    return JSON.parse(v);
  } catch {
    return v;
  }
};

const ProviderNameSchema = z.string().regex(new RegExp(PROVIDER_NAME_PATTERN));

/** One LLM provider: where requests go and with which defaults. */
const ProviderSchema = z
  .object({
    /** `openai`: an OpenAI-compatible endpoint at baseURL; `local`: a GGUF file run in process. */
    kind: z.enum(['openai', 'local']).default('openai'),
    baseURL: z.string().url('a provider needs baseURL, an OpenAI-compatible URL such as https://api.openai.com/v1').optional(),
    /** `local`: the GGUF file, its context size and CPU threads (defaults: DRIFTLINE_LOCAL_LLM_*). */
    modelPath: z.string().min(1).optional(),
    contextSize: z.number().int().min(512).optional(),
    threads: z.number().int().min(1).optional(),
    apiKey: z.string().optional(),
    /** The model of roles on this provider that name none. */
    model: z.string().min(1).optional(),
    temperature: z.number().min(0).max(2).optional(),
    /** `max_tokens` for every role on this provider (default: the role's DRIFTLINE_MAX_TOKENS_*). */
    maxTokens: z.number().int().min(16).optional(),
    /** Sent as `seed` (reproducible sampling where the provider supports it). */
    seed: z.number().int().optional(),
    /** The provider's rate limit for the whole deployment (its task queue's). */
    requestsPerSecond: z.number().positive().optional(),
    /** The provider's quota for the whole deployment, held by the shared budget (decisions/0016):
     * tokens (prompt + completion) and requests per minute, and requests in flight at once. */
    tokensPerMinute: z.number().positive().optional(),
    requestsPerMinute: z.number().positive().optional(),
    maxInFlight: z.number().int().min(1).optional(),
    structuredOutput: z.enum(['auto', 'json_schema', 'json_object', 'prompt']).optional(),
    foldSystemPrompt: z.boolean().optional(),
    /** The provider serves the Batch API (`/v1/files`, `/v1/batches`): batch-mode sweeps send it batches. */
    batch: z.boolean().optional(),
  })
  .strict()
  .refine((p) => !(p.kind === 'local' && p.batch), {
    message: 'a local GGUF provider serves no Batch API; `batch` is for OpenAI-compatible endpoints',
    path: ['batch'],
  })
  .refine((p) => p.kind === 'local' || p.baseURL !== undefined, {
    message: 'a provider needs baseURL, an OpenAI-compatible URL such as https://api.openai.com/v1',
    path: ['baseURL'],
  });
export type ProviderConfig = z.infer<typeof ProviderSchema>;

/** `provider` or `provider:model` (a model name may itself contain ':'), or {provider, model}. */
const RouteSchema = z.union([
  z
    .string()
    .min(1)
    .transform((v) => {
      const colon = v.indexOf(':');
      return colon < 0 ? { provider: v } : { provider: v.slice(0, colon), model: v.slice(colon + 1) || undefined };
    }),
  z.object({ provider: z.string().min(1), model: z.string().min(1).optional() }).strict(),
]);

const LibrarySchema = z.object({
  name: z.string().regex(/^[A-Za-z0-9_.-]+$/, 'a library name uses letters, digits, ".", "_" or "-"'),
  corpus: z.string().min(1),
});

/** true/false/1/0, from the environment or the config file. */
const booleanSetting = z
  .union([z.boolean(), z.enum(['true', 'false', '1', '0'])])
  .transform((v) => v === true || v === 'true' || v === '1');

/** A list, comma separated in the environment, an array in the config file. */
const listSetting = z
  .union([z.array(z.string()), z.string()])
  .transform((v) => (Array.isArray(v) ? v : v.split(',')).map((s) => s.trim()).filter(Boolean));

/** Absolute paths, for the sandbox's binds. */
const pathListSetting = listSetting.refine((paths) => paths.every((p) => isAbsolute(p)), {
  message: 'give absolute paths, comma separated',
});

/** The roles listed, minus some (typed, so a role added to LLM_ROLES lands in every derived shape). */
function rolesExcept<const X extends LlmRole>(...except: X[]): Exclude<LlmRole, X>[] {
  return LLM_ROLES.filter((r): r is Exclude<LlmRole, X> => !(except as LlmRole[]).includes(r));
}

/** An object shape with one field per role. */
function perRole<R extends string, S extends z.ZodType>(roles: readonly R[], field: (role: R) => S): Record<R, S> {
  return Object.fromEntries(roles.map((role) => [role, field(role)])) as Record<R, S>;
}

/** Temporal's own default namespace: the one default of TEMPORAL_NAMESPACE, also where the local
 * cluster registers driftline's search attributes when told no other. */
export const DEFAULT_TEMPORAL_NAMESPACE = 'default';

export const ConfigSchema = z.object({
  temporal: z.object({
    address: setting('TEMPORAL_ADDRESS', z.string().optional(), '`host:port` of an existing Temporal cluster', {
      unset: '`npm start` runs the dev server',
    }),
    namespace: setting(
      'TEMPORAL_NAMESPACE',
      z.string().default(DEFAULT_TEMPORAL_NAMESPACE),
      'the Temporal namespace of runs, sweeps and index builds',
    ),
    devServerPort: setting('TEMPORAL_PORT', z.coerce.number().int().min(1).max(65535).default(7233), "the dev server's gRPC port"),
    uiPort: setting('TEMPORAL_UI_PORT', z.coerce.number().int().min(1).max(65535).default(8233), "the dev server's Web UI port"),
    uiUrl: setting(
      'TEMPORAL_UI_URL',
      z.string().url('TEMPORAL_UI_URL must be a URL such as http://localhost:8233').optional(),
      'base URL of the Temporal Web UI: the links on runs (API, CLI, web page) point there',
      { unset: "the dev server's UI (`http://127.0.0.1:<TEMPORAL_UI_PORT>`)" },
    ),
    workflowBundle: setting(
      'DRIFTLINE_WORKFLOW_BUNDLE',
      z.string().min(1).optional(),
      'a prebuilt workflow bundle (`bundleWorkflowCode` output) for the main worker, so a restarted worker need not bundle again',
      { unset: '`npm start`: bundled once into the data dir; a lone worker bundles `workflows/` itself' },
    ),
    workerMetricsAddress: setting(
      'DRIFTLINE_METRICS_ADDRESS',
      z
        .string()
        .regex(/^[^\s:]+:\d+$/, 'DRIFTLINE_METRICS_ADDRESS must be host:port, e.g. 0.0.0.0:9464')
        .optional(),
      "`host:port` where each worker serves the Temporal SDK's Prometheus metrics (`/metrics`: task schedule-to-start latency, slots in use, …)",
      { unset: 'no metrics endpoint' },
    ),
    clientGraceMs: setting(
      'DRIFTLINE_TEMPORAL_GRACE_MS',
      z.coerce.number().int().min(0).default(15_000),
      'how long `driftline formalize` keeps asking a Temporal that stopped answering before it names the run and gives up',
    ),
  }),
  api: z.object({
    host: setting('HOST', z.string().default('127.0.0.1'), 'where the HTTP API listens; other than loopback only with API keys'),
    port: setting('PORT', z.coerce.number().int().min(0).max(65535).default(8080), "the HTTP API's port"),
    maxStatementChars: setting(
      'DRIFTLINE_MAX_STATEMENT_CHARS',
      z.coerce.number().int().min(1).default(20_000),
      'the longest statement the API accepts, in characters',
    ),
    keys: setting(
      'DRIFTLINE_API_KEYS',
      z
        .union([z.array(z.string()), z.string()])
        .transform((v, ctx) => {
          try {
            return parseApiKeys(Array.isArray(v) ? v.join(',') : v);
          } catch (err) {
            ctx.addIssue({ code: 'custom', message: (err as Error).message });
            return z.NEVER;
          }
        })
        .default([]),
      'API keys as `name:<sha256 hex of the key>` entries, comma separated (`npx driftline keys new` prints one)',
      { unset: 'no keys: the API listens on loopback only' },
    ),
    rateLimitPerMinute: setting(
      'DRIFTLINE_RATE_LIMIT',
      z.coerce.number().int().min(1).default(600),
      'requests per minute per API key (per client address without keys)',
    ),
  }),
  dataDir: setting(
    'DRIFTLINE_DATA_DIR',
    z.string().default('.driftline'),
    'Temporal history, indexes, logs and the sweep results database (`results.sqlite`)',
  ),
  publicDataDir: setting(
    'DRIFTLINE_SHARED_DATA',
    z.string().min(1).optional(),
    "the public data directory: the default library's corpus, `$DATA/…` paths of sweep files, the evaluation commands' data",
    { unset: '`<DRIFTLINE_DATA_DIR>/data`, where `npm run setup` and `driftline data pull` write it' },
  ),
  results: z
    .object({
      url: setting(
        'DRIFTLINE_RESULTS_URL',
        z
          .string()
          .regex(/^postgres(ql)?:\/\//, 'DRIFTLINE_RESULTS_URL must be a PostgreSQL URL such as postgres://user:pass@host:5432/driftline')
          .optional(),
        'a PostgreSQL URL (`postgres://user:pass@host:5432/db`) for sweep results shared by workers on several machines',
        { unset: 'SQLite at `<DRIFTLINE_DATA_DIR>/results.sqlite`' },
      ),
    })
    .prefault({}),
  libraries: setting(
    'DRIFTLINE_LIBRARIES',
    z.array(LibrarySchema),
    "the libraries the workers serve; the first is the default. The main worker records them in the data directory (`libraries.json`), where the CLI's `formalize` and `sweep start` read them",
    {
      type: '`name=corpus.jsonl` pairs, comma separated',
      unset: '`connf=` the pulled `connf/library.jsonl` (none until it is pulled)',
    },
  ),
  llm: z.object({
    baseURL: setting(
      'OPENAI_BASE_URL',
      z.string().url('OPENAI_BASE_URL must be a URL such as https://api.openai.com/v1').optional(),
      'the OpenAI-compatible endpoint of the provider named `default`, which every role without a provider of its own uses',
    ),
    apiKey: setting('OPENAI_API_KEY', z.string().optional(), 'the API key of the `default` provider'),
    temperature: setting(
      'DRIFTLINE_LLM_TEMPERATURE',
      z.coerce.number().min(0).max(2).optional(),
      "the `default` provider's sampling temperature (sent only when set; a run's `temperature` wins)",
    ),
    seed: setting(
      'DRIFTLINE_LLM_SEED',
      z.coerce.number().int().optional(),
      "the `default` provider's `seed` (reproducible sampling where the provider supports it; sent only when set)",
    ),
    requestsPerSecond: setting(
      'DRIFTLINE_LLM_REQUESTS_PER_SECOND',
      z.coerce.number().positive().optional(),
      "the `default` provider's rate limit for the whole deployment (its task queue's)",
      { unset: 'no limit' },
    ),
    tokensPerMinute: setting(
      'DRIFTLINE_LLM_TOKENS_PER_MINUTE',
      z.coerce.number().positive().optional(),
      "the `default` provider's tokens per minute (prompt + completion; estimated before each call from the prompt and `max_tokens`, corrected from the reply's usage), shared by every worker process through the results database",
      { unset: "no limit but the provider's own (its `x-ratelimit-*` headers and 429s)" },
    ),
    requestsPerMinute: setting(
      'DRIFTLINE_LLM_REQUESTS_PER_MINUTE',
      z.coerce.number().positive().optional(),
      "the `default` provider's requests per minute, for the whole deployment (its task queue's rate, with `DRIFTLINE_LLM_REQUESTS_PER_SECOND` the lower of the two, and the shared budget's)",
      { unset: "no limit but the provider's own (its `x-ratelimit-*` headers and 429s)" },
    ),
    batchCapable: setting(
      'DRIFTLINE_LLM_BATCH',
      booleanSetting.default(false),
      'the `default` provider serves the Batch API (`/v1/files`, `/v1/batches`, as OpenAI\'s): a sweep asking for batch mode (`llm: {batch: true}` or `sweep start --batch`) sends its calls to it in batches, at the batch price (`batchFactor` in `DRIFTLINE_LLM_PRICES`); other providers: `"batch": true` in `DRIFTLINE_PROVIDERS`',
    ),
    batchMaxRequests: setting(
      'DRIFTLINE_LLM_BATCH_MAX_REQUESTS',
      z.coerce.number().int().min(1).max(5000).default(1000),
      "a batch is sent when this many requests of one sweep and model are collected (kept well under the provider's 50,000 so one batch's bookkeeping stays small)",
    ),
    batchMaxAgeMs: setting(
      'DRIFTLINE_LLM_BATCH_MAX_AGE_MS',
      z.coerce.number().int().min(10).default(60_000),
      'a batch is sent when its oldest request has waited this long, however few were collected',
    ),
    batchPollMs: setting(
      'DRIFTLINE_LLM_BATCH_POLL_MS',
      z.coerce.number().int().min(10).default(60_000),
      'how often the batcher asks the provider about a batch in flight (a durable timer, not a busy activity)',
    ),
    batchIdleMs: setting(
      'DRIFTLINE_LLM_BATCH_IDLE_MS',
      z.coerce.number().int().min(10).default(600_000),
      'a batcher with nothing collected and nothing in flight ends after this long (the next request starts it again)',
    ),
    batchReadMs: setting(
      'DRIFTLINE_LLM_BATCH_READ_MS',
      z.coerce.number().int().min(10).default(2_000),
      "how often a waiting call reads the results database for its batch's answer",
    ),
    batchSlots: setting(
      'DRIFTLINE_LLM_BATCH_SLOTS',
      z.coerce.number().int().min(1).default(500),
      "calls of batch-mode runs that one main worker process holds while they wait for their batches (the `driftline-llm-batch` task queue's slots); a sweep's `window` above this waits for slots",
    ),
    maxInFlight: setting(
      'DRIFTLINE_LLM_MAX_IN_FLIGHT',
      z.coerce.number().int().min(1).optional(),
      "how many requests the `default` provider is sent at once, over every worker process (a local server's slots: llama.cpp's `--parallel`, vLLM's `--max-num-seqs`)",
      { unset: 'no limit' },
    ),
    providers: setting(
      'DRIFTLINE_PROVIDERS',
      z
        .preprocess(
          jsonSetting,
          z.record(z.string(), ProviderSchema).superRefine((providers, ctx) => {
            for (const name of Object.keys(providers)) {
              if (!ProviderNameSchema.safeParse(name).success)
                ctx.addIssue({ code: 'custom', message: `"${name}": a provider name uses letters, digits, "_" or "-" (at most 64)` });
            }
          }),
        )
        .default({}),
      'more LLM providers by name, as JSON (`llm.providers` in the config file): `{"local": {"baseURL": "http://127.0.0.1:8000/v1", "apiKey": "…", "model": "qwen2.5-7b", ' +
        '"temperature": 0.7, "maxTokens": 2048, "seed": 1, "requestsPerSecond": 2, "tokensPerMinute": 200000, "requestsPerMinute": 500, "maxInFlight": 4, "structuredOutput": "json_object", "foldSystemPrompt": false, "batch": true}}`; only `baseURL` is required ' +
        '(or `"kind": "local"` with `modelPath`, `contextSize`, `threads`: a GGUF model in the worker); `maxTokens` replaces the role\'s `DRIFTLINE_MAX_TOKENS_*` on that provider',
    ),
    roles: settingPerKey(
      'DRIFTLINE_ROLE_',
      PROVIDER_ROLES,
      z.preprocess(jsonSetting, z.partialRecord(z.enum(PROVIDER_ROLES), RouteSchema)).default({}),
      (role) =>
        `the provider of the ${role} (it ${PROVIDER_ROLE_DESCRIPTIONS[role as ProviderRole]}), and optionally its model there; ` +
        'all roles at once: `llm.roles` in the config file. A provider that is not configured is an error',
      {
        type: '`provider` or `provider:model` (the model may contain `:`)',
        unset: (role) =>
          role === 'translator'
            ? '`translator` when `DRIFTLINE_TRANSLATOR_BASE_URL` is set'
            : role === 'judge2'
              ? 'no second judge (unless `--second-model`)'
              : role === 'embedder'
                ? 'the `DRIFTLINE_EMBEDDINGS_*` settings'
                : '`default`',
      },
    ),
    models: z.object({
      ...perRole(rolesExcept('agent', 'translator'), (role) =>
        setting(
          envForKey('DRIFTLINE_MODEL_', role),
          z.string().min(1).default('gpt-4.1'),
          `the model of the ${role} (it ${LLM_ROLE_DESCRIPTIONS[role]}) when neither its \`DRIFTLINE_ROLE_*\` route nor its provider names one`,
        ),
      ),
      agent: setting(
        'DRIFTLINE_MODEL_AGENT',
        z.string().min(1).optional(),
        `the model of the agent (it ${LLM_ROLE_DESCRIPTIONS.agent}) when neither its route nor its provider names one`,
        {
          unset: "the formalizer's model",
        },
      ),
    }),
    timeoutMs: setting('DRIFTLINE_LLM_TIMEOUT_MS', z.coerce.number().int().min(1000).default(120_000), 'the time one LLM call may take'),
    maxReasks: setting(
      'DRIFTLINE_LLM_MAX_REASKS',
      z.coerce.number().int().min(0).max(10).default(2),
      're-asks after a malformed structured reply',
    ),
    maxTokens: z
      .object(
        perRole(LLM_ROLES, (role) =>
          setting(
            envForKey('DRIFTLINE_MAX_TOKENS_', role),
            z.coerce.number().int().min(16).default(DEFAULT_MAX_TOKENS[role]),
            `\`max_tokens\` sent for the ${role} (a server without a limit may write until its context is full)` +
              (role === 'agent' || role === 'translator'
                ? ''
                : '; a reply cut off at it is asked again once with twice the limit, then the run fails saying so'),
          ),
        ),
      )
      .prefault({}),
    structuredOutput: setting(
      'DRIFTLINE_LLM_STRUCTURED_OUTPUT',
      z.enum(['auto', 'json_schema', 'json_object', 'prompt']).default('auto'),
      'how the endpoint is asked for JSON: `json_schema` (OpenAI), `json_object` (with a `schema`: llama.cpp-based servers), `prompt` (schema in the instructions only), ' +
        'or `auto` (probed at start, falls back when a request is refused because of its response format)',
    ),
    foldSystemPrompt: setting(
      'DRIFTLINE_LLM_FOLD_SYSTEM_PROMPT',
      booleanSetting.default(false),
      "put the system prompt at the head of the first user message, for chat templates that drop system messages (e.g. llama-cpp-python's `--chat_format gemma`)",
    ),
    busyBackoffMs: setting(
      'DRIFTLINE_LLM_BUSY_BACKOFF_MS',
      z.coerce.number().int().min(0).default(60_000),
      'after a call times out, send nothing to that provider for this long (doubling while timeouts repeat): a server keeps generating for a client that left',
    ),
    provider: setting(
      'DRIFTLINE_LLM_PROVIDER',
      z.enum(['openai', 'local']).default('openai'),
      '`openai`: the `default` provider is the endpoint at `OPENAI_BASE_URL`; `local`: the GGUF model at `DRIFTLINE_LOCAL_LLM_PATH`, run in the worker (no endpoint, no key)',
    ),
    localModelPath: setting(
      'DRIFTLINE_LOCAL_LLM_PATH',
      z.string().default('.tools/models/gemma-3-270m-q4_k_m.gguf'),
      'the GGUF file for `local` (`npm run setup:llm` installs Gemma 3 270M there)',
    ),
    localContextSize: setting(
      'DRIFTLINE_LOCAL_LLM_CONTEXT',
      z.coerce.number().int().min(512).default(4096),
      'tokens of context for `local` (prompt and reply together)',
    ),
    localThreads: setting(
      'DRIFTLINE_LOCAL_LLM_THREADS',
      z.coerce.number().int().min(1).default(1),
      "CPU threads for `local`: llama.cpp's threads spin while they wait for each other, so on a busy 2-core machine 2 threads ran 16 times slower than 1",
    ),
    prices: setting(
      'DRIFTLINE_LLM_PRICES',
      z
        .preprocess(
          jsonSetting,
          z.record(
            z.string(),
            z
              .object({
                prompt: z.number().min(0),
                completion: z.number().min(0),
                cachedPrompt: z.number().min(0).optional(),
                batchFactor: z.number({ message: BATCH_FACTOR_RULE }).gt(0, BATCH_FACTOR_RULE).max(1, BATCH_FACTOR_RULE).optional(),
              })
              .strict(),
          ),
        )
        .default({}),
      `USD per million tokens by model, as JSON: \`{"gpt-4.1": {"prompt": 2, "completion": 8, "cachedPrompt": 0.5, "batchFactor": 0.5}}\`; runs report \`usage.costUsd\` for priced models. \`batchFactor\` (default ${DEFAULT_BATCH_FACTOR}): ${BATCH_FACTOR_RULE}; a call answered through a provider batch is recorded at that fraction of the price`,
    ),
  }),
  translator: z.object({
    baseURL: setting(
      'DRIFTLINE_TRANSLATOR_BASE_URL',
      z.string().url('DRIFTLINE_TRANSLATOR_BASE_URL must be a URL such as http://localhost:8000/v1').optional(),
      `the translator's OpenAI-compatible endpoint (the translator ${LLM_ROLE_DESCRIPTIONS.translator}); it becomes the provider \`translator\``,
    ),
    apiKey: setting('DRIFTLINE_TRANSLATOR_API_KEY', z.string().optional(), "the translator endpoint's API key"),
    model: setting('DRIFTLINE_MODEL_TRANSLATOR', z.string().min(1).default('herald'), "the translator's model"),
  }),
  store: z
    .object({
      kind: setting(
        'DRIFTLINE_STORE',
        z.enum(['embedded', 'qdrant']).default('embedded'),
        'where index versions live: `embedded` (LanceDB under the data dir, no server) or `qdrant`',
      ),
      qdrantUrl: setting(
        'QDRANT_URL',
        z.string().url('QDRANT_URL must be a URL such as http://localhost:6333').optional(),
        'the Qdrant server, for `DRIFTLINE_STORE=qdrant`',
      ),
      qdrantApiKey: setting('QDRANT_API_KEY', z.string().optional(), "the Qdrant server's API key"),
    })
    .refine((s) => s.kind !== 'qdrant' || Boolean(s.qdrantUrl), {
      message: 'DRIFTLINE_STORE=qdrant needs QDRANT_URL',
      path: ['qdrantUrl'],
    }),
  embeddings: z
    .object({
      embedder: setting(
        'DRIFTLINE_EMBEDDER',
        z.enum(['none', 'openai', 'local']).default('none'),
        'dense retrieval: `none` (lexical only; the run notes say so), `openai` (any OpenAI-compatible `/v1/embeddings`), `local` (a model directory on disk)',
      ),
      model: setting(
        'DRIFTLINE_EMBEDDING_MODEL',
        z.string().min(1).optional(),
        'the embedding model for `openai`, e.g. `text-embedding-3-small`, `BAAI/bge-m3`',
      ),
      baseURL: setting(
        'DRIFTLINE_EMBEDDINGS_BASE_URL',
        z.string().url('DRIFTLINE_EMBEDDINGS_BASE_URL must be a URL such as http://localhost:8000/v1').optional(),
        'the OpenAI-compatible endpoint embeddings are asked from',
        { unset: '`OPENAI_BASE_URL`' },
      ),
      apiKey: setting('DRIFTLINE_EMBEDDINGS_API_KEY', z.string().optional(), "the embeddings endpoint's API key", {
        unset: '`OPENAI_API_KEY` (when the endpoint is the same)',
      }),
      dimensions: setting('DRIFTLINE_EMBEDDING_DIMENSIONS', z.coerce.number().int().min(1).optional(), 'the vector size', {
        unset: 'known models, else probed',
      }),
      queryPrefix: setting(
        'DRIFTLINE_EMBEDDING_QUERY_PREFIX',
        z.string().optional(),
        "text put before each query, e.g. BGE's `Represent this sentence for searching relevant passages: `",
      ),
      documentPrefix: setting('DRIFTLINE_EMBEDDING_DOCUMENT_PREFIX', z.string().optional(), 'text put before each indexed document'),
      batchSize: setting('DRIFTLINE_EMBEDDING_BATCH', z.coerce.number().int().min(1).max(2048).default(64), 'texts per embeddings request'),
      localModelDir: setting(
        'DRIFTLINE_LOCAL_MODEL_DIR',
        z.string().default('.tools/models/all-MiniLM-L6-v2'),
        'the sentence-transformers model directory for `local` (`npm run setup:model` installs all-MiniLM-L6-v2 there)',
      ),
    })
    .prefault({})
    .refine((e) => e.embedder !== 'openai' || Boolean(e.model), {
      message: 'DRIFTLINE_EMBEDDER=openai needs DRIFTLINE_EMBEDDING_MODEL',
      path: ['model'],
    }),
  lean: z.object({
    replCmd: setting('LEAN_REPL_CMD', z.string().optional(), 'the shell command that starts a Lean REPL', {
      unset: 'statements are not compiled (compile is reported as `skipped`)',
    }),
    replCwd: setting('LEAN_REPL_CWD', z.string().optional(), "the Lean REPL's working directory"),
    header: setting('LEAN_HEADER', z.string().default('import Mathlib'), 'the header every statement is checked under'),
    timeoutMs: setting('LEAN_TIMEOUT_MS', z.coerce.number().int().min(1000).default(120_000), 'the time one check may take'),
    poolSize: setting(
      'LEAN_POOL_SIZE',
      z.coerce.number().int().min(1).max(64).default(2),
      'REPL processes in the pool; the Lean worker runs this many checks at once',
    ),
    maxUses: setting(
      'LEAN_MAX_USES',
      z.coerce.number().int().min(1).default(500),
      'checks per REPL process before it is replaced (the REPL only grows)',
    ),
    maxRssMb: setting(
      'LEAN_MAX_RSS_MB',
      z.coerce.number().int().min(0).default(16_384),
      'resident-memory cap per REPL process group, MB (0: not watched)',
    ),
    headerTimeoutMs: setting(
      'LEAN_HEADER_TIMEOUT_MS',
      z.coerce.number().int().min(1000).default(600_000),
      'the time importing a header may take (a cold Mathlib import is slow)',
    ),
    maxAddressSpaceMb: setting(
      'LEAN_MAX_AS_MB',
      z.coerce
        .number()
        .int()
        .refine((v) => v === 0 || v >= 256, { message: 'give at least 256 (MB), or 0 for no limit' })
        .default(DEFAULT_MAX_ADDRESS_SPACE_MB),
      'address-space limit per REPL process (RLIMIT_AS), MB; 0: none. Mathlib maps its `.olean` files, so leave tens of GB',
      { type: 'integer, 0 or ≥ 256' },
    ),
    sandbox: setting(
      'LEAN_SANDBOX',
      z.enum(['bwrap', 'off']).default('bwrap'),
      '`bwrap`: every REPL runs under bubblewrap (no network, cleared environment, read-only system and toolchain, private `/tmp` as HOME, no capabilities), and a Lean worker ' +
        'that cannot set it up refuses to start; `off`: no sandbox (only the cleaned environment and limits), and `/readyz` warns',
    ),
    sandboxBwrap: setting('LEAN_SANDBOX_BWRAP', z.string().min(1).default('bwrap'), 'the bubblewrap binary'),
    sandboxUser: setting(
      'LEAN_SANDBOX_USER',
      z
        .string()
        .regex(/^\d+(:\d+)?$/, 'give uid or uid:gid, e.g. 65534')
        .default(String(DEFAULT_SANDBOX_UID))
        .transform((v) => {
          const [uid, gid] = v.split(':').map(Number);
          return { uid: uid!, gid: gid ?? uid! };
        }),
      '`uid` or `uid:gid` the REPL runs as when the worker runs as root (a worker that is not root runs it as itself)',
    ),
    maxProcesses: setting(
      'LEAN_SANDBOX_MAX_PROCS',
      z.coerce.number().int().min(0).default(DEFAULT_MAX_PROCESSES),
      'RLIMIT_NPROC of the REPL: counts every process and thread of its uid on the machine, all REPLs of the pool together (0: none)',
    ),
    sandboxRead: setting(
      'LEAN_SANDBOX_READ',
      pathListSetting.default([]),
      'more absolute paths bound read-only into the sandbox (`/usr /bin /lib* /etc`, `LEAN_REPL_CWD`, `ELAN_HOME`, `LEAN_SYSROOT` and `LEAN_PATH` are bound already; the data directory is always hidden)',
    ),
    sandboxWrite: setting(
      'LEAN_SANDBOX_WRITE',
      pathListSetting.default([]),
      'absolute paths bound writable into the sandbox (Lean needs none)',
    ),
    sandboxEnv: setting(
      'LEAN_SANDBOX_ENV',
      listSetting
        .superRefine((names, ctx) => {
          for (const name of names) {
            const why = refusedEnvName(name);
            if (why) ctx.addIssue({ code: 'custom', message: `${name} is not passed to the Lean REPL: it ${why}` });
          }
        })
        .default([]),
      "names of more environment variables for the REPL (it gets `PATH`, `LANG`/`LC_*`, `LEAN_PATH`, `LEAN_SYSROOT`, `ELAN_*`, `LAKE_*` only; credential-looking and driftline's own names are refused)",
    ),
    noNetwork: setting(
      'LEAN_NO_NETWORK',
      booleanSetting.default(true),
      "cut REPL processes off from the network (the sandbox's own network namespace); `false`: the sandbox shares the network, and `/readyz` warns",
    ),
    equivalenceTimeoutMs: setting(
      'LEAN_EQUIVALENCE_TIMEOUT_MS',
      z.coerce.number().int().min(1000).default(300_000),
      'the time one equivalence check may take',
    ),
    allowedImports: setting(
      'LEAN_ALLOWED_IMPORTS',
      listSetting.default(['Mathlib', 'ConNF', 'Batteries', 'Aesop', 'Qq', 'Init', 'Std']),
      'the import roots a statement may use',
    ),
    commandKeywordsFile: setting(
      'LEAN_COMMAND_KEYWORDS',
      z.string().optional(),
      "a file of the library's command keywords as `lake exe keywords` dumps them (a JSON array); the screen refuses them besides its checked-in list",
    ),
  }),
});

export type Config = z.infer<typeof ConfigSchema>;

const LOOPBACK = new Set(['127.0.0.1', '::1', 'localhost']);

/** Where the API may listen: without API keys only on loopback, whatever HOST says. */
export function apiListenHost(config: Config): { host: string; loopbackOnly: boolean } {
  if (config.api.keys.length > 0) return { host: config.api.host, loopbackOnly: LOOPBACK.has(config.api.host) };
  return { host: LOOPBACK.has(config.api.host) ? config.api.host : '127.0.0.1', loopbackOnly: true };
}

/** The Temporal Web UI's base URL for run links. */
export function temporalUiUrl(config: Config): string {
  return config.temporal.uiUrl ?? `http://127.0.0.1:${config.temporal.uiPort}`;
}

/** Environment variable → config path, from the variables the schema's fields declare
 * (docs/configuration.md, generated from the same schema, documents each). */
export const ENV_KEYS: Record<string, string> = Object.fromEntries(envSettings(ConfigSchema).map((s) => [s.env, s.path]));

/** A variable read outside the schema: before the configuration loads (logging, the config
 * file's own path), by `npm run setup`, or by one command. The configuration reference lists
 * these after the schema's; test/config-reference.test.ts checks that the code reads no other. */
export interface OtherEnvVariable {
  env: string;
  type: string;
  default?: string;
  description: string;
}

export const OTHER_ENV_VARIABLES: readonly OtherEnvVariable[] = [
  {
    env: 'DRIFTLINE_CONFIG',
    type: 'path',
    default: '`driftline.config.json` in the project root, when it exists',
    description:
      'a JSON file of settings, nested as the config paths say (`{"llm": {"timeoutMs": 60000}}`); environment variables win over it, and it wins over the defaults',
  },
  {
    env: 'DRIFTLINE_DATA_MIRROR',
    type: 'directory or HTTP(S) URL',
    default: 'the sources on GitHub',
    description: 'where `npm run setup` and `driftline data pull` fetch the public data from: a copy laid out like the data directory',
  },
  {
    env: 'TEMPORAL_CLI_PATH',
    type: 'path',
    default: 'the one `npm run setup` installed',
    description: 'the `temporal` binary that runs the dev server',
  },
  {
    env: 'TEMPORAL_SERVER_TOOLS_DIR',
    type: 'path',
    default: '`.tools/temporal-server/v<version>`, where `npm run cluster -- build` puts them',
    description: 'the folder holding the Temporal server, schema tool, UI server and schemas that `npm run cluster` runs',
  },
  { env: 'DRIFTLINE_LOG_LEVEL', type: 'pino level (`trace` … `fatal`)', default: '`info`', description: "the stack's own logs (pino)" },
  {
    env: 'DRIFTLINE_LOG_PRETTY',
    type: '`0` or `1`',
    default: 'pretty in a terminal, JSON otherwise',
    description: '`1`: pretty-printed logs, `0`: JSON lines',
  },
  {
    env: 'DRIFTLINE_WORKER_LOG_LEVEL',
    type: 'Temporal SDK level (`TRACE` … `ERROR`)',
    default: '`WARN`',
    description: "the Temporal SDK's worker logs",
  },
  {
    env: 'DRIFTLINE_INSTALL_LOCAL_MODEL',
    type: '`1`',
    description: '`npm run setup` also installs the local embedding model (`npm run setup:model`)',
  },
  {
    env: 'DRIFTLINE_INSTALL_LOCAL_LLM',
    type: '`1`',
    description: '`npm run setup` also installs the local chat model (`npm run setup:llm`)',
  },
  {
    env: 'DRIFTLINE_INSTALL_SCHEMATHESIS',
    type: '`1`',
    description: '`npm run setup` also installs Schemathesis, for the API property tests',
  },
  {
    env: 'DRIFTLINE_INSTALL_TEMPORAL_SERVER',
    type: '`1`',
    description:
      '`npm run setup` also builds the Temporal server, schema tool and UI server for `npm run cluster` (needs Go; `npm run cluster -- build`)',
  },
  {
    env: 'DRIFTLINE_SUPERVISED',
    type: '`1`',
    description: 'set by `npm start` on the processes it starts (a worker then exits when its parent does); not for users',
  },
];

const ENV_BY_PATH = Object.fromEntries(Object.entries(ENV_KEYS).map(([env, path]) => [path, env]));

export class ConfigError extends Error {
  override name = 'ConfigError';
}

/** `name=corpus.jsonl` pairs, comma separated; the first is the default library. */
export function parseLibraries(value: string): { name: string; corpus: string }[] {
  return value
    .split(',')
    .map((pair) => pair.trim())
    .filter(Boolean)
    .map((pair) => {
      const eq = pair.indexOf('=');
      if (eq <= 0 || eq === pair.length - 1) {
        throw new ConfigError(`DRIFTLINE_LIBRARIES: "${pair}" is not of the form name=path/to/corpus.jsonl`);
      }
      return { name: pair.slice(0, eq).trim(), corpus: pair.slice(eq + 1).trim() };
    });
}

function setPath(target: Record<string, unknown>, path: string, value: unknown): void {
  const keys = path.split('.');
  let node = target;
  for (const key of keys.slice(0, -1)) {
    node[key] ??= {};
    node = node[key] as Record<string, unknown>;
  }
  node[keys[keys.length - 1]!] = value;
}

/**
 * Where the public data is read (the default library's corpus, the benchmarks of `$DATA/…` in
 * sweep files, the evaluation commands): `DRIFTLINE_SHARED_DATA` when set, else `data/` in the
 * data directory, where `npm run setup` and `driftline data pull` write it.
 */
export function publicDataDir(config: Pick<Config, 'dataDir' | 'publicDataDir'>): string {
  return config.publicDataDir ?? join(config.dataDir, 'data');
}

/** The default library: the ConNF corpus in the public data directory. */
export const DEFAULT_LIBRARY = { name: 'connf', file: 'connf/library.jsonl' } as const;

/** The default library's corpus file, for this configuration. */
export function defaultLibraryCorpus(config: Pick<Config, 'dataDir' | 'publicDataDir'>): string {
  return join(publicDataDir(config), DEFAULT_LIBRARY.file);
}

export interface LoadOptions {
  env?: NodeJS.ProcessEnv;
  /** Directory that relative paths are resolved against; default: the project root. */
  root?: string;
  /** Skip checking that corpus files exist (for commands that never read them). */
  skipFileChecks?: boolean;
}

/** Reads and validates the configuration; throws ConfigError naming every bad setting. */
export function loadConfig(options: LoadOptions = {}): Config {
  const env = options.env ?? process.env;
  const root = options.root ?? PROJECT_ROOT;
  const raw: Record<string, unknown> = {};

  const filePath = env.DRIFTLINE_CONFIG ?? join(root, 'driftline.config.json');
  if (env.DRIFTLINE_CONFIG && !existsSync(filePath)) {
    throw new ConfigError(`DRIFTLINE_CONFIG=${filePath} does not exist.`);
  }
  if (existsSync(filePath)) {
    try {
      Object.assign(raw, JSON.parse(readFileSync(filePath, 'utf8')));
    } catch (err) {
      throw new ConfigError(`${filePath} is not valid JSON: ${(err as Error).message}`);
    }
  }
  for (const [name, path] of Object.entries(ENV_KEYS)) {
    const value = env[name];
    if (value === undefined || value === '') continue;
    setPath(raw, path, name === 'DRIFTLINE_LIBRARIES' ? parseLibraries(value) : value);
  }
  // No libraries configured: the default one, found once the data directory is known.
  const librariesConfigured = raw.libraries !== undefined;
  raw.libraries ??= [];
  for (const section of ['temporal', 'api', 'llm', 'lean', 'store', 'translator']) raw[section] ??= {};
  (raw.llm as Record<string, unknown>).models ??= {};

  const parsed = ConfigSchema.safeParse(raw);
  if (!parsed.success) {
    const problems = parsed.error.issues.map((issue) => {
      const path = issue.path.join('.');
      // The setting that holds the bad value: the longest part of its path a variable names
      // (a price's field is inside DRIFTLINE_LLM_PRICES's JSON).
      const envName = issue.path
        .map((_, i) => ENV_BY_PATH[issue.path.slice(0, issue.path.length - i).join('.')])
        .find((name) => name !== undefined);
      return `- ${envName ? `${envName} (${path})` : path || 'config'}: ${issue.message}`;
    });
    throw new ConfigError(`Invalid configuration:\n${problems.join('\n')}`);
  }
  const config = parsed.data;
  config.dataDir = isAbsolute(config.dataDir) ? config.dataDir : resolve(root, config.dataDir);
  if (config.publicDataDir) config.publicDataDir = resolve(root, config.publicDataDir);
  if (librariesConfigured && config.libraries.length === 0)
    throw new ConfigError('Invalid configuration:\n- DRIFTLINE_LIBRARIES (libraries): at least one library is needed');
  if (!librariesConfigured) {
    // The default library serves once its corpus is pulled; until then the stack runs with no
    // library, and /readyz and the start banner say how to get it (missingServices).
    const corpus = defaultLibraryCorpus(config);
    if (options.skipFileChecks || existsSync(corpus)) config.libraries.push({ name: DEFAULT_LIBRARY.name, corpus });
  }
  const bundle = config.temporal.workflowBundle;
  if (bundle && !isAbsolute(bundle)) config.temporal.workflowBundle = resolve(root, bundle);
  for (const library of config.libraries) {
    library.corpus = isAbsolute(library.corpus) ? library.corpus : resolve(root, library.corpus);
    if (!options.skipFileChecks && !existsSync(library.corpus)) {
      throw new ConfigError(
        `Library "${library.name}": corpus file ${library.corpus} does not exist. Set DRIFTLINE_LIBRARIES=name=path/to/corpus.jsonl (comma separated).`,
      );
    }
  }
  config.llm.localModelPath = isAbsolute(config.llm.localModelPath) ? config.llm.localModelPath : resolve(root, config.llm.localModelPath);
  if (config.llm.provider === 'local' && !options.skipFileChecks && !existsSync(config.llm.localModelPath)) {
    throw new ConfigError(
      `DRIFTLINE_LLM_PROVIDER=local: no model at ${config.llm.localModelPath}. Run \`npm run setup:llm\` (or set DRIFTLINE_LOCAL_LLM_PATH to a GGUF file).`,
    );
  }
  resolveProviders(config, root, Boolean(options.skipFileChecks));
  const emb = config.embeddings;
  emb.localModelDir = isAbsolute(emb.localModelDir) ? emb.localModelDir : resolve(root, emb.localModelDir);
  // Embeddings go to the LLM endpoint (and key) unless configured apart.
  emb.baseURL ??= config.llm.baseURL;
  emb.apiKey ??= emb.baseURL === config.llm.baseURL ? config.llm.apiKey : undefined;
  if (emb.embedder === 'openai' && !emb.baseURL) {
    throw new ConfigError('DRIFTLINE_EMBEDDER=openai needs DRIFTLINE_EMBEDDINGS_BASE_URL (or OPENAI_BASE_URL).');
  }
  const names = config.libraries.map((l) => l.name);
  const duplicate = names.find((n, i) => names.indexOf(n) !== i);
  if (duplicate) throw new ConfigError(`DRIFTLINE_LIBRARIES: library "${duplicate}" is named twice.`);
  return config;
}

/**
 * Completes the providers: `default` from OPENAI_BASE_URL (and the top-level settings), a
 * `translator` provider from DRIFTLINE_TRANSLATOR_BASE_URL; checks that every role names a
 * provider that exists; points the embedder at its role's provider.
 */
function resolveProviders(config: Config, root: string, skipFileChecks: boolean): void {
  const llm = config.llm;
  if (llm.provider === 'local' && !llm.providers.default) {
    // DRIFTLINE_LLM_PROVIDER=local: the default provider is the GGUF model run in process.
    llm.providers.default = {
      kind: 'local',
      modelPath: llm.localModelPath,
      contextSize: llm.localContextSize,
      threads: llm.localThreads,
      ...(llm.temperature !== undefined ? { temperature: llm.temperature } : {}),
      ...(llm.seed !== undefined ? { seed: llm.seed } : {}),
      ...(llm.requestsPerSecond !== undefined ? { requestsPerSecond: llm.requestsPerSecond } : {}),
      ...quotaOf(llm),
    };
  } else if (llm.baseURL && !llm.providers.default) {
    llm.providers.default = {
      kind: 'openai',
      baseURL: llm.baseURL,
      ...(llm.apiKey !== undefined ? { apiKey: llm.apiKey } : {}),
      ...(llm.temperature !== undefined ? { temperature: llm.temperature } : {}),
      ...(llm.seed !== undefined ? { seed: llm.seed } : {}),
      ...(llm.requestsPerSecond !== undefined ? { requestsPerSecond: llm.requestsPerSecond } : {}),
      ...quotaOf(llm),
      ...(llm.batchCapable ? { batch: true } : {}),
    };
  }
  const t = config.translator;
  if (t.baseURL && !llm.providers.translator) {
    llm.providers.translator = {
      kind: 'openai',
      baseURL: t.baseURL,
      ...(t.apiKey !== undefined ? { apiKey: t.apiKey } : {}),
      model: t.model,
    };
  }
  if (t.baseURL && !llm.roles.translator) llm.roles.translator = { provider: 'translator', model: t.model };
  const names = Object.keys(llm.providers);
  for (const [role, route] of Object.entries(llm.roles)) {
    if (route && !llm.providers[route.provider]) {
      throw new ConfigError(
        `DRIFTLINE_ROLE_${role.toUpperCase()} names LLM provider "${route.provider}", which is not configured (configured: ${names.map((n) => `"${n}"`).join(', ') || 'none'}; define it in DRIFTLINE_PROVIDERS, or set OPENAI_BASE_URL for "default").`,
      );
    }
  }
  for (const [name, p] of Object.entries(llm.providers)) {
    if (p.kind !== 'local') continue;
    p.modelPath = p.modelPath ? (isAbsolute(p.modelPath) ? p.modelPath : resolve(root, p.modelPath)) : llm.localModelPath;
    if (!skipFileChecks && !existsSync(p.modelPath)) {
      const what = name === 'default' && llm.provider === 'local' ? 'DRIFTLINE_LLM_PROVIDER=local' : `LLM provider "${name}"`;
      throw new ConfigError(
        `${what}: no model at ${p.modelPath}. Run \`npm run setup:llm\` (or set DRIFTLINE_LOCAL_LLM_PATH to a GGUF file).`,
      );
    }
  }
  const embedder = llm.roles.embedder;
  if (embedder) {
    const p = llm.providers[embedder.provider]!;
    if (p.kind === 'local')
      throw new ConfigError(`DRIFTLINE_ROLE_EMBEDDER: provider "${embedder.provider}" is a local GGUF model, which serves no embeddings.`);
    const emb = config.embeddings;
    emb.baseURL ??= p.baseURL;
    emb.apiKey ??= p.apiKey;
    emb.model ??= embedder.model ?? p.model;
  }
}

/** The provider of each chat role in this deployment (roles without one are left out). */
/** The top-level quota settings, as the `default` provider's. */
function quotaOf(llm: Config['llm']): Pick<ProviderConfig, 'tokensPerMinute' | 'requestsPerMinute' | 'maxInFlight'> {
  return {
    ...(llm.tokensPerMinute !== undefined ? { tokensPerMinute: llm.tokensPerMinute } : {}),
    ...(llm.requestsPerMinute !== undefined ? { requestsPerMinute: llm.requestsPerMinute } : {}),
    ...(llm.maxInFlight !== undefined ? { maxInFlight: llm.maxInFlight } : {}),
  };
}

/** How far above `requestsPerMinute` its task queue's rate is set: the shared budget holds the
 * rate exactly, and Temporal's per-queue limiter, coarser (it under-delivers by 10-20% when it
 * binds, docs/benchmarks.md), is then only the ceiling that keeps activities from piling up in
 * the workers. */
export const QUEUE_RATE_HEADROOM = 1.25;

/** A provider's request rate for its task queue, per second: `requestsPerSecond` as given
 * (decisions/0004), else `requestsPerMinute` / 60 with headroom (undefined: none). */
export function queueRequestsPerSecond(p: Pick<ProviderConfig, 'requestsPerSecond' | 'requestsPerMinute'>): number | undefined {
  const perMinute = p.requestsPerMinute !== undefined ? (p.requestsPerMinute / 60) * QUEUE_RATE_HEADROOM : undefined;
  if (p.requestsPerSecond === undefined) return perMinute;
  return perMinute === undefined ? p.requestsPerSecond : Math.min(p.requestsPerSecond, perMinute);
}

/** A provider's requests per minute for its shared budget: the lower of the two settings. */
export function budgetRequestsPerMinute(p: Pick<ProviderConfig, 'requestsPerSecond' | 'requestsPerMinute'>): number | undefined {
  const fromSeconds = p.requestsPerSecond !== undefined ? p.requestsPerSecond * 60 : undefined;
  if (p.requestsPerMinute === undefined) return fromSeconds;
  return fromSeconds === undefined ? p.requestsPerMinute : Math.min(fromSeconds, p.requestsPerMinute);
}

export function providerOfRoles(config: Config): LlmCallPolicy['providers'] {
  const out: Partial<Record<LlmRole, string>> = {};
  for (const role of LLM_ROLES) {
    const provider = config.llm.roles[role]?.provider ?? (config.llm.providers.default && role !== 'translator' ? 'default' : undefined);
    if (provider) out[role] = provider;
  }
  return out;
}

/** What a run needs to know of the workers' LLM settings: the time budget of an LLM activity
 * (timeout, re-asks) and each role's provider, whose task queue runs its activities. */
export function runLlmSettings(config: Config): LlmCallPolicy {
  const providers = providerOfRoles(config);
  return {
    timeoutMs: config.llm.timeoutMs,
    maxReasks: config.llm.maxReasks,
    ...(providers && Object.keys(providers).length ? { providers } : {}),
  };
}

/** What is not configured, in words: shown by /readyz and at start. */
export function missingServices(config: Config): string[] {
  const missing: string[] = [];
  if (config.libraries.length === 0) missing.push(noLibraryMessage(config));
  if (Object.keys(config.llm.providers).length === 0)
    missing.push(
      'LLM: set OPENAI_BASE_URL (and OPENAI_API_KEY) to an OpenAI-compatible endpoint, or run the small local model (`npm run setup:llm`, then DRIFTLINE_LLM_PROVIDER=local); runs fail until then.',
    );
  if (!config.lean.replCmd)
    missing.push(
      'Lean: set LEAN_REPL_CMD to a Lean REPL command; until then statements are not compiled (compile is reported as skipped).',
    );
  return missing;
}

/** What is configured but weakens the Lean REPL's isolation, in words: shown by /readyz. */
export function sandboxWarnings(config: Config): string[] {
  const lean = config.lean;
  if (!lean.replCmd) return [];
  if (lean.sandbox === 'off') {
    return [
      "LEAN_SANDBOX=off: the Lean REPL runs without the bubblewrap sandbox; text that gets past the statement screen runs with the worker's file system (and network, unless `unshare -n` is permitted).",
    ];
  }
  const out: string[] = [];
  if (!lean.noNetwork) out.push('LEAN_NO_NETWORK=false: the Lean REPL sandbox shares the network.');
  if (!lean.maxAddressSpaceMb) out.push('LEAN_MAX_AS_MB=0: the Lean REPL has no address-space limit.');
  if (!lean.maxProcesses) out.push('LEAN_SANDBOX_MAX_PROCS=0: the Lean REPL has no process limit.');
  return out;
}

/** Why no library is served, and how to get the default one. */
export function noLibraryMessage(config: Pick<Config, 'dataDir' | 'publicDataDir'>): string {
  return (
    `Library: none is served: the default library "${DEFAULT_LIBRARY.name}" needs ${defaultLibraryCorpus(config)}, which does not exist. ` +
    'Run `npx driftline data pull connf` (with DRIFTLINE_DATA_MIRROR=<directory or URL> where github.com cannot be reached), or set DRIFTLINE_LIBRARIES=name=path/to/corpus.jsonl; then restart.'
  );
}
