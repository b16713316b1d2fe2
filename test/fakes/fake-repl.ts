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
import { appendFileSync, existsSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { elaborate, type FakeReplScript } from './fake-repl-rules';

function arg(name: string): string | undefined {
  const i = process.argv.indexOf(name);
  return i >= 0 ? process.argv[i + 1] : undefined;
}

const scriptPath = arg('--script') ?? process.env.FAKE_REPL_SCRIPT;
const logPath = arg('--log') ?? process.env.FAKE_REPL_LOG;
const script: FakeReplScript = scriptPath ? (JSON.parse(readFileSync(scriptPath, 'utf8')) as FakeReplScript) : {};

function log(event: string, detail = ''): void {
  if (logPath) appendFileSync(logPath, `${event} pid=${process.pid}${detail ? ` ${detail}` : ''}\n`);
}

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
  commands++;
  if (script.forgetEnvsAfter && commands === script.forgetEnvsAfter + 1) {
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
  if (script.memoryPerCommandMb) {
    const chunk = Buffer.alloc(script.memoryPerCommandMb * 1024 * 1024, 1); // filled: resident
    hoard.push(chunk);
  }
  const onceMarker = script.crashOnceMarker ?? 'CRASH_ONCE';
  if (script.stateDir && cmd.includes(onceMarker)) {
    const flag = join(script.stateDir, 'crashed-once');
    if (!existsSync(flag)) {
      writeFileSync(flag, String(process.pid));
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
  if (/\b(theorem|lemma|def|example|instance|abbrev)\b/.test(cmd)) log('begin', `name=${/\b(?:theorem|lemma)\s+(\S+)/.exec(cmd)?.[1] ?? '-'}`);
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
    isHeader ? 'header' : 'body',
    `env=${env}${isHeader ? ` imports=${result.imports.join(',')}` : ` base=${typeof command.env === 'number' ? command.env : 'none'}`} began=${began} ended=${Date.now()}`,
  );
  if (cmd.includes(script.noiseMarker ?? 'NOISE_REPL')) process.stdout.write('Processing incremental state [pos: 0..10]:\nnoise\n\n');
  const out: Record<string, unknown> = {};
  if (result.sorries.length > 0) out.sorries = result.sorries;
  if (result.messages.length > 0) out.messages = result.messages;
  out.env = env;
  reply(out);
}

// Input framing as in the REPL's `getLines`: lines are joined (right-trimmed) until a blank
// line; a blank line with nothing before it is an empty query, which the REPL cannot parse.
let lines: string[] = [];
let buffered = '';
let queue: Promise<void> = Promise.resolve();

function submit(query: string): void {
  queue = queue.then(() => (hung ? undefined : handle(query)));
}

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

log('start');
// Keep a hung process alive even with stdin closed.
setInterval(() => {}, 1 << 30);
