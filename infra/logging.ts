// Logs: structured JSON (pino) for machines, pretty lines when a person watches a terminal.
import { DefaultLogger, type LogEntry, type LogLevel } from '@temporalio/worker';
import pino, { type Logger } from 'pino';

/** A pino logger; pretty-printed when stdout is a terminal (or DRIFTLINE_LOG_PRETTY=1). */
export function createLogger(name: string): Logger {
  const level = process.env.DRIFTLINE_LOG_LEVEL ?? 'info';
  const pretty = process.env.DRIFTLINE_LOG_PRETTY ? process.env.DRIFTLINE_LOG_PRETTY === '1' : Boolean(process.stdout.isTTY);
  if (!pretty) return pino({ name, level });
  return pino({
    name,
    level,
    transport: { target: 'pino-pretty', options: { colorize: true, translateTime: 'HH:MM:ss', ignore: 'pid,hostname' } },
  });
}

// Expected on a worker that only runs activities; not worth a warning.
const EXPECTED = [/^No workflows registered, not polling for workflow tasks/, /^No Nexus services registered/];

/** The Temporal SDK's logger for our workers: warnings and up (DRIFTLINE_WORKER_LOG_LEVEL
 * overrides), without the messages every activity-only worker prints. */
export function workerLogger(): DefaultLogger {
  const level = (process.env.DRIFTLINE_WORKER_LOG_LEVEL as LogLevel | undefined) ?? 'WARN';
  const fallback = new DefaultLogger(level);
  return new DefaultLogger(level, (entry: LogEntry) => {
    if (EXPECTED.some((pattern) => pattern.test(entry.message))) return;
    fallback.log(entry.level, entry.message, entry.meta);
  });
}
