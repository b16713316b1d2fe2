// A stand-in for leanprover-community/repl, speaking its protocol byte for byte: one JSON
// command per blank-line-terminated block on stdin, one pretty-printed JSON reply plus a blank
// line on stdout, environments numbered from 0, `{"message": "Unknown environment."}`.
// What it "elaborates" is scripted (fake-repl-rules.ts).
//
//   node --import tsx test/fakes/fake-repl.ts [--script FILE] [--log FILE]
//   (or FAKE_REPL_SCRIPT / FAKE_REPL_LOG in the environment)
//
// The log gets one line per event (`start`, `begin` (a command with declarations arrived),
// `header`, `body` (answered), `crash`, `hang`, `exit`) with the pid, so tests can count
// processes, header imports and checks, including checks that were never answered.
//
// Two behaviours of code that runs inside the REPL and writes to its stdout (decision 0017): a
// command carrying `FORGE_REPL` makes the fake write a forged reply (`{"env": N}`, the number
// the real reply is about to get, or `forgedEnv`) before its real one; `LINGER_REPL` leaves a
// task behind that writes a reply aimed at the next command `lingerDelayMs` later. The
// confirmation driftline sends after each reply (`#check driftline_confirm_<nonce>`) is logged
// as `confirm`, not `body`.
//
// Like Lean, it would run whatever it is sent: a command carrying, where Lean reads code, a word
// driftline never sends (`#eval`, `run_cmd`, `unsafe`, …) logs `leak` and leaves a marker file in `leakDir`, so a test
// that lets hostile text through fails. At start it logs what the process can see and do
// (`env` names, `limits`, and the scripted `connect`/`write`/`read` probes, in `<log>.probes`), so tests can show
// what the sandbox takes away.
import { appendFileSync, existsSync, readFileSync, writeFileSync } from 'node:fs';
import { connect } from 'node:net';
import { join } from 'node:path';
import { elaborate, leanVisibleCode, type FakeReplScript } from './fake-repl-rules';

function arg(name: string): string | undefined {
  const i = process.argv.indexOf(name);
  return i >= 0 ? process.argv[i + 1] : undefined;
}

const scriptPath = arg('--script') ?? process.env.FAKE_REPL_SCRIPT;
const logPath = arg('--log') ?? process.env.FAKE_REPL_LOG;
const script: FakeReplScript = scriptPath ? (JSON.parse(readFileSync(scriptPath, 'utf8')) as FakeReplScript) : {};

// In the sandbox's pid namespace (pid 1 is bwrap) every fake is pid 2 or so, and that number
// means another process outside: log a unique number above any pid instead (pid_max ≤ 2^22),
// so tests still tell processes apart and a kill by it reaches nobody.
const sandboxed = existsSync('/proc/1/comm') && readFileSync('/proc/1/comm', 'utf8').trim() === 'bwrap';
const logPid = sandboxed ? 1_000_000_000 + Math.floor(Math.random() * 1_000_000_000) : process.pid;

function log(event: string, detail = '', file = logPath): void {
  if (file) appendFileSync(file, `${event} pid=${logPid}${detail ? ` ${detail}` : ''}\n`);
}
// The start-up probes go to a log of their own (`<log>.probes`), so the event log stays the
// sequence of what the REPL was asked and did.
const probe = (event: string, detail: string) => log(event, detail, logPath && `${logPath}.probes`);

// The REPL's environments: what each one has imported and the theorems declared in it.
interface Env {
  imports: string[];
  declared: Record<string, string>;
  signatures: Record<string, string>;
}
let envs: (Env | undefined)[] = [];
let commands = 0;
let hung = false;
// Memory kept on purpose (see `memoryPerCommandMb`).
const hoard: Buffer[] = [];

function reply(value: unknown): void {
  // Lean pretty-prints over several lines (never a blank one), then prints an empty line.
  process.stdout.write(`${JSON.stringify(value, null, 1)}\n\n`);
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

// Words that start (or smuggle in) code Lean would run or declarations driftline never makes.
// Deliberately not driftline's screen: a plain word match on the raw text, so the two cannot
// share a blind spot.
// prettier-ignore
const LEAK_WORDS = [
  'run_cmd', 'run_elab', 'run_meta', 'run_tac', 'by_elab', 'elab', 'elab_rules', 'macro', 'macro_rules', 'syntax',
  'initialize', 'builtin_initialize', 'axiom', 'opaque', 'unsafe', 'partial', 'implemented_by', 'extern', 'csimp',
  'native_decide', 'simproc', 'irreducible_def', 'declare_config_elab', 'eval%', 'ofReduceBool', 'ofReduceNat',
  'include_str', 'unif_hint', 'unset_option', 'plausible', 'polyrith', 'declare_syntax_cat', 'attribute',
];
const LEAK_WORD = new RegExp(`(?<![\\p{L}\\p{N}_'.!?])(?:${LEAK_WORDS.join('|')})(?![\\p{L}\\p{N}_'!?])`, 'gu');
const HASH_WORD = /#[\p{L}_][\p{L}\p{N}_!?']*/gu;
const SENT_HASH_WORDS = new Set(['#check', '#print']);
let leaks = 0;

function leakedWords(raw: string): string[] {
  // What Lean would read as code: not comments or literals, but after a broken char literal,
  // what follows it (leanVisibleCode).
  const cmd = leanVisibleCode(raw);
  const words = [...cmd.matchAll(HASH_WORD)].map((m) => m[0]).filter((w) => !SENT_HASH_WORDS.has(w));
  words.push(...[...cmd.matchAll(LEAK_WORD)].map((m) => m[0]));
  return [...new Set(words)];
}

function recordLeak(cmd: string): void {
  const words = leakedWords(cmd);
  if (words.length === 0) return;
  leaks++;
  log('leak', `words=${words.join(',')}`);
  if (script.leakDir) writeFileSync(join(script.leakDir, `leak-${logPid}-${leaks}.txt`), `${words.join(' ')}\n${cmd}\n`);
}

function errorCode(error: unknown): string {
  return (error as NodeJS.ErrnoException).code ?? (error as Error).message.replace(/\s+/g, '_');
}

/** What this process can see and do, logged once at start. */
async function probes(): Promise<void> {
  probe('env', `names=${Object.keys(process.env).sort().join(',')}`);
  const status = existsSync('/proc/self/status') ? readFileSync('/proc/self/status', 'utf8') : '';
  const limits = existsSync('/proc/self/limits') ? readFileSync('/proc/self/limits', 'utf8') : '';
  const soft = (name: string) => new RegExp(`^${name}\\s+(\\S+)`, 'm').exec(limits)?.[1] ?? '?';
  probe(
    'limits',
    `sandboxed=${sandboxed} as=${soft('Max address space')} nproc=${soft('Max processes')} uid=${process.getuid?.() ?? '?'} capeff=${/^CapEff:\s*(\S+)/m.exec(status)?.[1] ?? '?'}`,
  );
  for (const path of script.probeWrite ?? []) {
    let result = 'ok';
    try {
      writeFileSync(path, 'written by the fake REPL\n');
    } catch (error) {
      result = errorCode(error);
    }
    probe('write', `path=${path} result=${result}`);
  }
  for (const path of script.probeRead ?? []) {
    let result = 'ok';
    try {
      readFileSync(path);
    } catch (error) {
      result = errorCode(error);
    }
    probe('read', `path=${path} result=${result}`);
  }
  const port = script.probeConnectPort;
  if (port !== undefined) {
    const result = await new Promise<string>((resolve) => {
      const socket = connect({ host: '127.0.0.1', port });
      socket.setTimeout(3000, () => {
        socket.destroy();
        resolve('timeout');
      });
      socket.once('connect', () => {
        socket.end();
        resolve('connected');
      });
      socket.once('error', (error) => resolve(errorCode(error)));
    });
    probe('connect', `port=${port} result=${result}`);
  }
}

async function handle(query: string): Promise<void> {
  let command: { cmd?: unknown; env?: unknown };
  try {
    command = JSON.parse(query) as typeof command;
  } catch (error) {
    // The real REPL throws out of its loop on unparseable input and dies.
    process.stderr.write(`uncaught exception: {"message": "Could not parse JSON:\\n${(error as Error).message}"}\n`);
    log('exit', 'code=1 reason=bad-json');
    process.exit(1);
  }
  if (typeof command.cmd !== 'string') {
    process.stderr.write('uncaught exception: {"message": "Could not parse as a valid JSON command"}\n');
    process.exit(1);
  }
  const cmd = command.cmd;
  const confirm = cmd.startsWith('#check driftline_confirm_');
  if (!confirm) commands++;
  recordLeak(cmd);
  if (script.forgetEnvsAfter && !confirm && commands === script.forgetEnvsAfter + 1) {
    // Keep the numbering (the real REPL never reuses an id) but lose every environment.
    envs = envs.map(() => undefined);
    log('forget');
  }
  const base: Env | undefined = typeof command.env === 'number' ? envs[command.env] : { imports: [], declared: {}, signatures: {} };
  if (base === undefined) {
    log('unknown-env', `env=${String(command.env)}`);
    reply({ message: 'Unknown environment.' });
    return;
  }
  if (script.memoryPerCommandMb && !confirm) {
    const chunk = Buffer.alloc(script.memoryPerCommandMb * 1024 * 1024, 1); // filled: resident
    hoard.push(chunk);
  }
  const onceMarker = script.crashOnceMarker ?? 'CRASH_ONCE';
  if (script.stateDir && cmd.includes(onceMarker)) {
    const flag = join(script.stateDir, 'crashed-once');
    if (!existsSync(flag)) {
      writeFileSync(flag, String(logPid));
      log('crash', 'once');
      process.stdout.write('{"messages":\n [{"severity": "error",\n');
      process.stderr.write('PANIC at lean_panic_fn (simulated)\n');
      process.exit(134);
    }
  }
  if (cmd.includes(script.crashMarker ?? 'CRASH_REPL')) {
    log('crash');
    process.stdout.write('{"messages":\n [{"severity": "error",\n'); // cut off mid-reply
    process.stderr.write('Stack overflow detected. Aborting.\n');
    process.exit(134);
  }
  if (cmd.includes(script.hangMarker ?? 'HANG_REPL')) {
    log('hang');
    hung = true;
    return;
  }
  const began = Date.now();
  if (/\b(theorem|lemma|def|example|instance|abbrev)\b/.test(cmd))
    log('begin', `name=${/\b(?:theorem|lemma)\s+(\S+)/.exec(cmd)?.[1] ?? '-'}`);
  const result = elaborate(cmd, script, command.env === undefined, base.declared, base.signatures);
  const isHeader = result.imports.length > 0;
  const hasBody = /\b(theorem|lemma|def|example|instance|abbrev)\b/.test(cmd);
  await sleep((isHeader ? (script.headerDelayMs ?? 0) : 0) + (hasBody ? (script.bodyDelayMs ?? 0) : 0));
  const env = envs.length;
  envs.push({
    imports: [...base.imports, ...result.imports],
    declared: { ...base.declared, ...result.declared },
    signatures: { ...base.signatures, ...result.signatures },
  });
  log(
    isHeader ? 'header' : confirm ? 'confirm' : 'body',
    `env=${env}${isHeader ? ` imports=${result.imports.join(',')}` : ` base=${typeof command.env === 'number' ? command.env : 'none'}`} began=${began} ended=${Date.now()}`,
  );
  if (cmd.includes(script.noiseMarker ?? 'NOISE_REPL')) process.stdout.write('Processing incremental state [pos: 0..10]:\nnoise\n\n');
  const out: Record<string, unknown> = {};
  if (result.sorries.length > 0) out.sorries = result.sorries;
  if (result.messages.length > 0) out.messages = result.messages;
  out.env = env;
  if (cmd.includes(script.forgeMarker ?? 'FORGE_REPL')) {
    log('forge', `env=${script.forgedEnv ?? env}`);
    reply({ env: script.forgedEnv ?? env });
    if (script.forgeGapMs) await sleep(script.forgeGapMs);
  }
  reply(out);
  if (cmd.includes(script.lingerMarker ?? 'LINGER_REPL')) {
    // Not awaited: the REPL goes back to its loop while the task runs on.
    setTimeout(() => {
      log('linger', `env=${envs.length}`);
      reply({ env: envs.length });
    }, script.lingerDelayMs ?? 300);
  }
}

// Input framing as in the REPL's `getLines`: lines are joined (right-trimmed) until a blank
// line; a blank line with nothing before it is an empty query, which the REPL cannot parse.
let lines: string[] = [];
let buffered = '';
let queue: Promise<void> = Promise.resolve();

function submit(query: string): void {
  queue = queue.then(() => (hung ? undefined : handle(query)));
}

log('start');
// Probes first: stdin waits (paused) until they are logged.
await probes();

process.stdin.setEncoding('utf8');
process.stdin.on('data', (chunk: string) => {
  buffered += chunk;
  let newline: number;
  while ((newline = buffered.indexOf('\n')) >= 0) {
    const line = buffered.slice(0, newline);
    buffered = buffered.slice(newline + 1);
    if (line.trim() === '') {
      submit(lines.length > 0 ? lines.join('') : '\n');
      lines = [];
    } else {
      lines.push(line.trimEnd());
    }
  }
});
process.stdin.on('end', () => {
  if (buffered.trim() !== '') lines.push(buffered.trimEnd());
  if (lines.length > 0) submit(lines.join(''));
  void queue.then(() => {
    if (hung) return; // a busy REPL does not notice the end of its input
    log('exit', 'code=0');
    process.exit(0);
  });
});

// Keep a hung process alive even with stdin closed.
setInterval(() => {}, 1 << 30);
