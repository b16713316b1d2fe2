// Logs: structured JSON (pino) for machines, pretty lines when a person watches a terminal.
import { appendFileSync, mkdirSync } from 'node:fs';
import { dirname } from 'node:path';
import { inspect } from 'node:util';
import { DefaultLogger, type LogEntry, type LogLevel } from '@temporalio/worker';
import pino, { type Logger } from 'pino';

/** A pino logger; pretty-printed when its stream is a terminal (or DRIFTLINE_LOG_PRETTY=1). On
 * stdout, or with `stderr` on stderr (`driftline mcp`, whose stdout is the protocol). */
export function createLogger(name: string, options: { stderr?: boolean } = {}): Logger {
  const level = process.env.DRIFTLINE_LOG_LEVEL ?? 'info';
  const stream = options.stderr ? process.stderr : process.stdout;
  const pretty = process.env.DRIFTLINE_LOG_PRETTY ? process.env.DRIFTLINE_LOG_PRETTY === '1' : Boolean(stream.isTTY);
  if (!pretty) return options.stderr ? pino({ name, level }, pino.destination(2)) : pino({ name, level });
  return pino({
    name,
    level,
    transport: {
      target: 'pino-pretty',
      options: { colorize: true, translateTime: 'HH:MM:ss', ignore: 'pid,hostname', ...(options.stderr ? { destination: 2 } : {}) },
    },
  });
}

// Expected on a worker that only runs activities; not worth a warning.
const EXPECTED = [/^No workflows registered, not polling for workflow tasks/, /^No Nexus services registered/];

/** The Temporal SDK's logger for our workers: warnings and up (DRIFTLINE_WORKER_LOG_LEVEL
 * overrides), without the messages every activity-only worker prints. With `logFile`, an entry
 * carrying an error (an activity or workflow that failed, e.g. a run with no LLM configured) is
 * one line in the terminal, and the whole entry, stack trace included, goes to the file. */
export function workerLogger(logFile?: string): DefaultLogger {
  const level = (process.env.DRIFTLINE_WORKER_LOG_LEVEL as LogLevel | undefined) ?? 'WARN';
  const fallback = new DefaultLogger(level);
  if (logFile) mkdirSync(dirname(logFile), { recursive: true });
  return new DefaultLogger(level, (entry: LogEntry) => {
    if (EXPECTED.some((pattern) => pattern.test(entry.message))) return;
    const { error, ...rest } = entry.meta ?? {};
    if (logFile && error instanceof Error) {
      const at = new Date(Number(entry.timestampNanos / 1_000_000n)).toISOString();
      try {
        appendFileSync(
          logFile,
          `${at} ${entry.level} ${entry.message} ${inspect({ error, ...rest }, { depth: 6, breakLength: Infinity })}\n`,
        );
      } catch {
        fallback.log(entry.level, entry.message, entry.meta);
        return;
      }
      const where = ['activityType', 'workflowType', 'workflowId', 'attempt'].flatMap((k) =>
        rest[k] !== undefined ? [`${k}=${String(rest[k])}`] : [],
      );
      fallback.log(
        entry.level,
        `${entry.message}: ${error.message}${where.length ? ` (${where.join(' ')})` : ''}; stack trace in ${logFile}`,
      );
      return;
    }
    fallback.log(entry.level, entry.message, entry.meta);
  });
}
