// The one typed place for configuration: environment variables over an optional
// `driftline.config.json`, over defaults that run on one machine. Only entry points call this.
import { existsSync, readFileSync } from 'node:fs';
import { isAbsolute, join, resolve } from 'node:path';
import { z } from 'zod';
import { PROJECT_ROOT } from './temporal-cli';
import { parseApiKeys } from '../api/api-keys';
import { LLM_ROLE_NAMES, PROVIDER_NAME_PATTERN } from '../common/run-config-schema';
import type { LlmCallPolicy } from '../common/llm-call-policy';
import { DEFAULT_MAX_ADDRESS_SPACE_MB, DEFAULT_MAX_PROCESSES, DEFAULT_SANDBOX_UID, refusedEnvName } from '../engines/lean/sandbox';

/** The roles an LLM provider serves: the five chat roles of runs, the second judge of
 * `driftline eval judge`, and the embedder (its endpoint; DRIFTLINE_EMBEDDER=openai still chooses it). */
export const PROVIDER_ROLES = ['decomposer', 'formalizer', 'judge', 'judge2', 'agent', 'translator', 'embedder'] as const;
export type ProviderRole = (typeof PROVIDER_ROLES)[number];

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
    structuredOutput: z.enum(['auto', 'json_schema', 'json_object', 'prompt']).optional(),
    foldSystemPrompt: z.boolean().optional(),
  })
  .strict()
  .refine((p) => p.kind === 'local' || p.baseURL !== undefined, { message: 'a provider needs baseURL, an OpenAI-compatible URL such as https://api.openai.com/v1', path: ['baseURL'] });
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
const pathListSetting = listSetting.refine((paths) => paths.every((p) => isAbsolute(p)), { message: 'give absolute paths, comma separated' });

export const ConfigSchema = z.object({
  temporal: z.object({
    /** host:port of an existing Temporal cluster; unset: `npm start` runs the dev server. */
    address: z.string().optional(),
    namespace: z.string().default('default'),
    devServerPort: z.coerce.number().int().min(1).max(65535).default(7233),
    uiPort: z.coerce.number().int().min(1).max(65535).default(8233),
    /** Base URL of the Temporal Web UI for links on runs; default: the dev server's UI. */
    uiUrl: z.string().url('TEMPORAL_UI_URL must be a URL such as http://localhost:8233').optional(),
    /** A prebuilt workflow bundle (`bundleWorkflowCode` output) for the main worker; unset: the
     * worker bundles `workflows/` itself when it starts. */
    workflowBundle: z.string().min(1).optional(),
    /** host:port where a worker process serves the Temporal SDK's Prometheus metrics (task
     * schedule-to-start latency, slots in use, …); unset: no metrics endpoint. */
    workerMetricsAddress: z.string().regex(/^[^\s:]+:\d+$/, 'DRIFTLINE_METRICS_ADDRESS must be host:port, e.g. 0.0.0.0:9464').optional(),
    /** How long `driftline formalize` keeps asking a Temporal that stopped answering. */
    clientGraceMs: z.coerce.number().int().min(0).default(15_000),
  }),
  api: z.object({
    host: z.string().default('127.0.0.1'),
    port: z.coerce.number().int().min(0).max(65535).default(8080),
    /** Largest accepted statement, in characters. */
    maxStatementChars: z.coerce.number().int().min(1).default(20_000),
    /** API keys as `name:<sha256 hex of the key>`, comma separated; none: loopback only. */
    keys: z
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
    /** Requests per minute per API key (per client address without keys). */
    rateLimitPerMinute: z.coerce.number().int().min(1).default(600),
  }),
  dataDir: z.string().default('.driftline'),
  /** The public data (default library, benchmarks); unset: `<dataDir>/data`, where it is pulled. */
  publicDataDir: z.string().min(1).optional(),
  /** Where sweep results go: PostgreSQL at `url`, else SQLite at `<dataDir>/results.sqlite`. */
  results: z
    .object({
      url: z
        .string()
        .regex(/^postgres(ql)?:\/\//, 'DRIFTLINE_RESULTS_URL must be a PostgreSQL URL such as postgres://user:pass@host:5432/driftline')
        .optional(),
    })
    .prefault({}),
  libraries: z.array(LibrarySchema),
  llm: z.object({
    /** The default provider (named `default`): OPENAI_BASE_URL, OPENAI_API_KEY and the settings below. */
    baseURL: z.string().url('OPENAI_BASE_URL must be a URL such as https://api.openai.com/v1').optional(),
    apiKey: z.string().optional(),
    /** The default provider's sampling temperature, seed and rate limit. */
    temperature: z.coerce.number().min(0).max(2).optional(),
    seed: z.coerce.number().int().optional(),
    requestsPerSecond: z.coerce.number().positive().optional(),
    /** More providers by name: {"local": {"baseURL": "http://127.0.0.1:8000/v1", "model": "qwen", "requestsPerSecond": 2}}. */
    providers: z
      .preprocess(
        jsonSetting,
        z.record(z.string(), ProviderSchema).superRefine((providers, ctx) => {
          for (const name of Object.keys(providers)) {
            if (!ProviderNameSchema.safeParse(name).success) ctx.addIssue({ code: 'custom', message: `"${name}": a provider name uses letters, digits, "_" or "-" (at most 64)` });
          }
        }),
      )
      .default({}),
    /** Role → provider (and model): {"formalizer": "local", "judge": "openai:o3"}; unnamed roles use `default`. */
    roles: z.preprocess(jsonSetting, z.partialRecord(z.enum(PROVIDER_ROLES), RouteSchema)).default({}),
    models: z.object({
      decomposer: z.string().min(1).default('gpt-4.1'),
      formalizer: z.string().min(1).default('gpt-4.1'),
      judge: z.string().min(1).default('gpt-4.1'),
      /** The agent's orchestrator; default: the formalizer's model. */
      agent: z.string().min(1).optional(),
    }),
    timeoutMs: z.coerce.number().int().min(1000).default(120_000),
    maxReasks: z.coerce.number().int().min(0).max(10).default(2),
    /** `max_tokens` per role: a server without a limit may write until its context is full. */
    maxTokens: z
      .object({
        decomposer: z.coerce.number().int().min(16).default(1024),
        formalizer: z.coerce.number().int().min(16).default(2048),
        judge: z.coerce.number().int().min(16).default(1024),
        /** One step of the agent (a tool call or the final answer). */
        agent: z.coerce.number().int().min(16).default(2048),
        /** The translator behind the agent's `draft` tool. */
        translator: z.coerce.number().int().min(16).default(2048),
      })
      .prefault({}),
    /** How the provider is asked for JSON: `auto` probes at start and falls back when refused. */
    structuredOutput: z.enum(['auto', 'json_schema', 'json_object', 'prompt']).default('auto'),
    /** Fold the system prompt into the first user message (chat templates that drop system). */
    foldSystemPrompt: booleanSetting.default(false),
    /** Pause after a timeout before this provider is called again (doubling while it repeats). */
    busyBackoffMs: z.coerce.number().int().min(0).default(60_000),
    /** `openai`: the endpoint at OPENAI_BASE_URL; `local`: a GGUF model run in process. */
    provider: z.enum(['openai', 'local']).default('openai'),
    /** The GGUF file for `local` (`npm run setup:llm` installs Gemma 3 270M there). */
    localModelPath: z.string().default('.tools/models/gemma-3-270m-q4_k_m.gguf'),
    /** Tokens of context for the local model (prompt and reply together). */
    localContextSize: z.coerce.number().int().min(512).default(4096),
    /** CPU threads for the local model (one: see local-gguf.ts on why more can be slower). */
    localThreads: z.coerce.number().int().min(1).default(1),
    /** USD per million tokens by model: {"gpt-4.1": {"prompt": 2, "completion": 8, "cachedPrompt": 0.5}}. */
    prices: z
      .preprocess(
        jsonSetting,
        z.record(z.string(), z.object({ prompt: z.number().min(0), completion: z.number().min(0), cachedPrompt: z.number().min(0).optional() }).strict()),
      )
      .default({}),
  }),
  /** The translator behind the agent's `draft` tool: its own OpenAI-compatible endpoint. */
  translator: z.object({
    baseURL: z.string().url('DRIFTLINE_TRANSLATOR_BASE_URL must be a URL such as http://localhost:8000/v1').optional(),
    apiKey: z.string().optional(),
    model: z.string().min(1).default('herald'),
  }),
  store: z
    .object({
      /** Where index versions live: `embedded` (LanceDB under dataDir, no server) or `qdrant`. */
      kind: z.enum(['embedded', 'qdrant']).default('embedded'),
      qdrantUrl: z.string().url('QDRANT_URL must be a URL such as http://localhost:6333').optional(),
      qdrantApiKey: z.string().optional(),
    })
    .refine((s) => s.kind !== 'qdrant' || Boolean(s.qdrantUrl), { message: 'DRIFTLINE_STORE=qdrant needs QDRANT_URL', path: ['qdrantUrl'] }),
  /** Dense retrieval. `none`: lexical only (and the run notes say so). */
  embeddings: z
    .object({
      embedder: z.enum(['none', 'openai', 'local']).default('none'),
      /** Model name for `openai` (e.g. text-embedding-3-small, BAAI/bge-m3). */
      model: z.string().min(1).optional(),
      /** OpenAI-compatible base URL for embeddings; default OPENAI_BASE_URL. */
      baseURL: z.string().url('DRIFTLINE_EMBEDDINGS_BASE_URL must be a URL such as http://localhost:8000/v1').optional(),
      apiKey: z.string().optional(),
      dimensions: z.coerce.number().int().min(1).optional(),
      /** Prepended to queries, e.g. BGE's "Represent this sentence for searching relevant passages: ". */
      queryPrefix: z.string().optional(),
      documentPrefix: z.string().optional(),
      batchSize: z.coerce.number().int().min(1).max(2048).default(64),
      /** A sentence-transformers model directory on disk, for `local`. */
      localModelDir: z.string().default('.tools/models/all-MiniLM-L6-v2'),
    })
    .prefault({})
    .refine((e) => e.embedder !== 'openai' || Boolean(e.model), { message: 'DRIFTLINE_EMBEDDER=openai needs DRIFTLINE_EMBEDDING_MODEL', path: ['model'] }),
  lean: z.object({
    /** Shell command that starts a Lean REPL; unset: compile reports `skipped`. */
    replCmd: z.string().optional(),
    replCwd: z.string().optional(),
    header: z.string().default('import Mathlib'),
    timeoutMs: z.coerce.number().int().min(1000).default(120_000),
    /** REPL processes in the pool; the Lean worker runs this many checks at once. */
    poolSize: z.coerce.number().int().min(1).max(64).default(2),
    /** Checks per process before it is replaced (the REPL only grows). */
    maxUses: z.coerce.number().int().min(1).default(500),
    /** Resident memory cap per REPL process group, MB (0: not watched). */
    maxRssMb: z.coerce.number().int().min(0).default(16_384),
    /** Time for importing a header (a cold Mathlib import is slow). */
    headerTimeoutMs: z.coerce.number().int().min(1000).default(600_000),
    /** Address-space limit per REPL process (RLIMIT_AS), MB; 0: none. Mathlib maps large files. */
    maxAddressSpaceMb: z.coerce
      .number()
      .int()
      .refine((v) => v === 0 || v >= 256, { message: 'give at least 256 (MB), or 0 for no limit' })
      .default(DEFAULT_MAX_ADDRESS_SPACE_MB),
    /** `bwrap`: every REPL runs under bubblewrap, and the Lean worker refuses to start without
     * it; `off`: no sandbox (/readyz warns). */
    sandbox: z.enum(['bwrap', 'off']).default('bwrap'),
    /** The bubblewrap binary. */
    sandboxBwrap: z.string().min(1).default('bwrap'),
    /** `uid` or `uid:gid` the REPL runs as when the worker runs as root. */
    sandboxUser: z
      .string()
      .regex(/^\d+(:\d+)?$/, 'give uid or uid:gid, e.g. 65534')
      .default(String(DEFAULT_SANDBOX_UID))
      .transform((v) => {
        const [uid, gid] = v.split(':').map(Number);
        return { uid: uid!, gid: gid ?? uid! };
      }),
    /** RLIMIT_NPROC of the sandbox uid (its processes and threads machine-wide, every REPL of the pool together); 0: none. */
    maxProcesses: z.coerce.number().int().min(0).default(DEFAULT_MAX_PROCESSES),
    /** More paths bound read-only into the sandbox (the REPL binary's project, for instance). */
    sandboxRead: pathListSetting.default([]),
    /** Paths bound writable into the sandbox (Lean needs none). */
    sandboxWrite: pathListSetting.default([]),
    /** Names of more environment variables the REPL gets (never credentials or driftline's own). */
    sandboxEnv: listSetting
      .superRefine((names, ctx) => {
        for (const name of names) {
          const why = refusedEnvName(name);
          if (why) ctx.addIssue({ code: 'custom', message: `${name} is not passed to the Lean REPL: it ${why}` });
        }
      })
      .default([]),
    /** Cut REPL processes off from the network (the sandbox's own network namespace). */
    noNetwork: z
      .union([z.boolean(), z.enum(['true', 'false', '1', '0'])])
      .transform((v) => v === true || v === 'true' || v === '1')
      .default(true),
    /** Budget of one equivalence check. */
    equivalenceTimeoutMs: z.coerce.number().int().min(1000).default(300_000),
    /** Import roots a statement may use, comma separated. */
    allowedImports: z
      .union([z.array(z.string()), z.string()])
      .transform((v) => (Array.isArray(v) ? v : v.split(',')).map((s) => s.trim()).filter(Boolean))
      .default(['Mathlib', 'ConNF', 'Batteries', 'Aesop', 'Qq', 'Init', 'Std']),
    /** The library's command keywords as lean-image/extract dumps them (a JSON array); added to
     * the screen's checked-in list. */
    commandKeywordsFile: z.string().optional(),
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

/** Environment variable → config path. Documented in README's configuration table. */
export const ENV_KEYS: Record<string, string> = {
  TEMPORAL_ADDRESS: 'temporal.address',
  TEMPORAL_NAMESPACE: 'temporal.namespace',
  TEMPORAL_PORT: 'temporal.devServerPort',
  TEMPORAL_UI_PORT: 'temporal.uiPort',
  DRIFTLINE_WORKFLOW_BUNDLE: 'temporal.workflowBundle',
  DRIFTLINE_METRICS_ADDRESS: 'temporal.workerMetricsAddress',
  DRIFTLINE_TEMPORAL_GRACE_MS: 'temporal.clientGraceMs',
  HOST: 'api.host',
  PORT: 'api.port',
  DRIFTLINE_MAX_STATEMENT_CHARS: 'api.maxStatementChars',
  DRIFTLINE_API_KEYS: 'api.keys',
  DRIFTLINE_RATE_LIMIT: 'api.rateLimitPerMinute',
  TEMPORAL_UI_URL: 'temporal.uiUrl',
  DRIFTLINE_DATA_DIR: 'dataDir',
  DRIFTLINE_SHARED_DATA: 'publicDataDir',
  DRIFTLINE_RESULTS_URL: 'results.url',
  DRIFTLINE_LIBRARIES: 'libraries',
  OPENAI_BASE_URL: 'llm.baseURL',
  OPENAI_API_KEY: 'llm.apiKey',
  DRIFTLINE_LLM_TEMPERATURE: 'llm.temperature',
  DRIFTLINE_LLM_SEED: 'llm.seed',
  DRIFTLINE_LLM_REQUESTS_PER_SECOND: 'llm.requestsPerSecond',
  DRIFTLINE_PROVIDERS: 'llm.providers',
  DRIFTLINE_ROLE_DECOMPOSER: 'llm.roles.decomposer',
  DRIFTLINE_ROLE_FORMALIZER: 'llm.roles.formalizer',
  DRIFTLINE_ROLE_JUDGE: 'llm.roles.judge',
  DRIFTLINE_ROLE_JUDGE2: 'llm.roles.judge2',
  DRIFTLINE_ROLE_AGENT: 'llm.roles.agent',
  DRIFTLINE_ROLE_TRANSLATOR: 'llm.roles.translator',
  DRIFTLINE_ROLE_EMBEDDER: 'llm.roles.embedder',
  DRIFTLINE_MODEL_DECOMPOSER: 'llm.models.decomposer',
  DRIFTLINE_MODEL_FORMALIZER: 'llm.models.formalizer',
  DRIFTLINE_MODEL_JUDGE: 'llm.models.judge',
  DRIFTLINE_MODEL_AGENT: 'llm.models.agent',
  DRIFTLINE_TRANSLATOR_BASE_URL: 'translator.baseURL',
  DRIFTLINE_TRANSLATOR_API_KEY: 'translator.apiKey',
  DRIFTLINE_MODEL_TRANSLATOR: 'translator.model',
  DRIFTLINE_LLM_TIMEOUT_MS: 'llm.timeoutMs',
  DRIFTLINE_LLM_MAX_REASKS: 'llm.maxReasks',
  DRIFTLINE_MAX_TOKENS_DECOMPOSER: 'llm.maxTokens.decomposer',
  DRIFTLINE_MAX_TOKENS_FORMALIZER: 'llm.maxTokens.formalizer',
  DRIFTLINE_MAX_TOKENS_JUDGE: 'llm.maxTokens.judge',
  DRIFTLINE_MAX_TOKENS_AGENT: 'llm.maxTokens.agent',
  DRIFTLINE_MAX_TOKENS_TRANSLATOR: 'llm.maxTokens.translator',
  DRIFTLINE_LLM_STRUCTURED_OUTPUT: 'llm.structuredOutput',
  DRIFTLINE_LLM_FOLD_SYSTEM_PROMPT: 'llm.foldSystemPrompt',
  DRIFTLINE_LLM_BUSY_BACKOFF_MS: 'llm.busyBackoffMs',
  DRIFTLINE_LLM_PROVIDER: 'llm.provider',
  DRIFTLINE_LOCAL_LLM_PATH: 'llm.localModelPath',
  DRIFTLINE_LOCAL_LLM_CONTEXT: 'llm.localContextSize',
  DRIFTLINE_LOCAL_LLM_THREADS: 'llm.localThreads',
  DRIFTLINE_LLM_PRICES: 'llm.prices',
  DRIFTLINE_STORE: 'store.kind',
  QDRANT_URL: 'store.qdrantUrl',
  QDRANT_API_KEY: 'store.qdrantApiKey',
  LEAN_REPL_CMD: 'lean.replCmd',
  LEAN_REPL_CWD: 'lean.replCwd',
  LEAN_HEADER: 'lean.header',
  LEAN_TIMEOUT_MS: 'lean.timeoutMs',
  LEAN_POOL_SIZE: 'lean.poolSize',
  LEAN_MAX_USES: 'lean.maxUses',
  LEAN_MAX_RSS_MB: 'lean.maxRssMb',
  LEAN_HEADER_TIMEOUT_MS: 'lean.headerTimeoutMs',
  LEAN_MAX_AS_MB: 'lean.maxAddressSpaceMb',
  LEAN_NO_NETWORK: 'lean.noNetwork',
  LEAN_SANDBOX: 'lean.sandbox',
  LEAN_SANDBOX_BWRAP: 'lean.sandboxBwrap',
  LEAN_SANDBOX_USER: 'lean.sandboxUser',
  LEAN_SANDBOX_MAX_PROCS: 'lean.maxProcesses',
  LEAN_SANDBOX_READ: 'lean.sandboxRead',
  LEAN_SANDBOX_WRITE: 'lean.sandboxWrite',
  LEAN_SANDBOX_ENV: 'lean.sandboxEnv',
  LEAN_EQUIVALENCE_TIMEOUT_MS: 'lean.equivalenceTimeoutMs',
  LEAN_ALLOWED_IMPORTS: 'lean.allowedImports',
  LEAN_COMMAND_KEYWORDS: 'lean.commandKeywordsFile',
  DRIFTLINE_EMBEDDER: 'embeddings.embedder',
  DRIFTLINE_EMBEDDING_MODEL: 'embeddings.model',
  DRIFTLINE_EMBEDDINGS_BASE_URL: 'embeddings.baseURL',
  DRIFTLINE_EMBEDDINGS_API_KEY: 'embeddings.apiKey',
  DRIFTLINE_EMBEDDING_DIMENSIONS: 'embeddings.dimensions',
  DRIFTLINE_EMBEDDING_QUERY_PREFIX: 'embeddings.queryPrefix',
  DRIFTLINE_EMBEDDING_DOCUMENT_PREFIX: 'embeddings.documentPrefix',
  DRIFTLINE_EMBEDDING_BATCH: 'embeddings.batchSize',
  DRIFTLINE_LOCAL_MODEL_DIR: 'embeddings.localModelDir',
};

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
      const envName = ENV_BY_PATH[path] ?? ENV_BY_PATH[path.split('.').slice(0, -1).join('.')] ?? ENV_BY_PATH[String(issue.path[0])];
      return `- ${envName ? `${envName} (${path})` : path || 'config'}: ${issue.message}`;
    });
    throw new ConfigError(`Invalid configuration:\n${problems.join('\n')}`);
  }
  const config = parsed.data;
  config.dataDir = isAbsolute(config.dataDir) ? config.dataDir : resolve(root, config.dataDir);
  if (config.publicDataDir) config.publicDataDir = resolve(root, config.publicDataDir);
  if (librariesConfigured && config.libraries.length === 0) throw new ConfigError('Invalid configuration:\n- DRIFTLINE_LIBRARIES (libraries): at least one library is needed');
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
    throw new ConfigError(`DRIFTLINE_LLM_PROVIDER=local: no model at ${config.llm.localModelPath}. Run \`npm run setup:llm\` (or set DRIFTLINE_LOCAL_LLM_PATH to a GGUF file).`);
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
    };
  } else if (llm.baseURL && !llm.providers.default) {
    llm.providers.default = {
      kind: 'openai',
      baseURL: llm.baseURL,
      ...(llm.apiKey !== undefined ? { apiKey: llm.apiKey } : {}),
      ...(llm.temperature !== undefined ? { temperature: llm.temperature } : {}),
      ...(llm.seed !== undefined ? { seed: llm.seed } : {}),
      ...(llm.requestsPerSecond !== undefined ? { requestsPerSecond: llm.requestsPerSecond } : {}),
    };
  }
  const t = config.translator;
  if (t.baseURL && !llm.providers.translator) {
    llm.providers.translator = { kind: 'openai', baseURL: t.baseURL, ...(t.apiKey !== undefined ? { apiKey: t.apiKey } : {}), model: t.model };
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
      throw new ConfigError(`${what}: no model at ${p.modelPath}. Run \`npm run setup:llm\` (or set DRIFTLINE_LOCAL_LLM_PATH to a GGUF file).`);
    }
  }
  const embedder = llm.roles.embedder;
  if (embedder) {
    const p = llm.providers[embedder.provider]!;
    if (p.kind === 'local') throw new ConfigError(`DRIFTLINE_ROLE_EMBEDDER: provider "${embedder.provider}" is a local GGUF model, which serves no embeddings.`);
    const emb = config.embeddings;
    emb.baseURL ??= p.baseURL;
    emb.apiKey ??= p.apiKey;
    emb.model ??= embedder.model ?? p.model;
  }
}

/** The provider of each chat role in this deployment (roles without one are left out). */
export function providerOfRoles(config: Config): LlmCallPolicy['providers'] {
  const out: Partial<Record<(typeof LLM_ROLE_NAMES)[number], string>> = {};
  for (const role of LLM_ROLE_NAMES) {
    const provider = config.llm.roles[role]?.provider ?? (config.llm.providers.default && role !== 'translator' ? 'default' : undefined);
    if (provider) out[role] = provider;
  }
  return out;
}

/** What a run needs to know of the workers' LLM settings: the time budget of an LLM activity
 * (timeout, re-asks) and each role's provider, whose task queue runs its activities. */
export function runLlmSettings(config: Config): LlmCallPolicy {
  const providers = providerOfRoles(config);
  return { timeoutMs: config.llm.timeoutMs, maxReasks: config.llm.maxReasks, ...(providers && Object.keys(providers).length ? { providers } : {}) };
}

/** What is not configured, in words: shown by /readyz and at start. */
export function missingServices(config: Config): string[] {
  const missing: string[] = [];
  if (config.libraries.length === 0) missing.push(noLibraryMessage(config));
  if (Object.keys(config.llm.providers).length === 0) missing.push('LLM: set OPENAI_BASE_URL (and OPENAI_API_KEY) to an OpenAI-compatible endpoint, or run the small local model (`npm run setup:llm`, then DRIFTLINE_LLM_PROVIDER=local); runs fail until then.');
  if (!config.lean.replCmd) missing.push('Lean: set LEAN_REPL_CMD to a Lean REPL command; until then statements are not compiled (compile is reported as skipped).');
  return missing;
}

/** What is configured but weakens the Lean REPL's isolation, in words: shown by /readyz. */
export function sandboxWarnings(config: Config): string[] {
  const lean = config.lean;
  if (!lean.replCmd) return [];
  if (lean.sandbox === 'off') {
    return ['LEAN_SANDBOX=off: the Lean REPL runs without the bubblewrap sandbox; text that gets past the statement screen runs with the worker\'s file system (and network, unless `unshare -n` is permitted).'];
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
