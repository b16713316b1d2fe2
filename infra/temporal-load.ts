// Watches the dev server's log for signs of overload that would otherwise go unseen: slow gRPC
// calls, persistence writes that failed (their deadline passed while queued behind others:
// the dev server keeps history in SQLite, which takes one write at a time) and tasks that had to
// be processed again. The stack prints a warning line and /readyz lists it while it lasts.
import { openSync, readSync, closeSync, statSync, existsSync } from 'node:fs';

const SIGNS: { key: keyof OverloadCounts; pattern: RegExp }[] = [
  { key: 'slowCalls', pattern: /msg="Slow gRPC call"/ },
  { key: 'failedWrites', pattern: /msg="[^"]*operation failed\.?"/ },
  { key: 'retriedTasks', pattern: /msg="Fail to process task"/ },
];

export interface OverloadCounts {
  slowCalls: number;
  failedWrites: number;
  retriedTasks: number;
}

export interface TemporalLoadWatch {
  /** Counts within the last window, or null when nothing was seen. */
  recent(): OverloadCounts | null;
  /** A sentence for people, or null when all is well. */
  describe(): string | null;
  stop(): void;
}

/** Counts overload lines in one chunk of log text. Pure. */
export function countOverload(text: string): OverloadCounts {
  const counts: OverloadCounts = { slowCalls: 0, failedWrites: 0, retriedTasks: 0 };
  for (const line of text.split('\n')) {
    for (const sign of SIGNS) if (sign.pattern.test(line)) counts[sign.key]++;
  }
  return counts;
}

export function describeOverload(c: OverloadCounts, windowSeconds: number, logFile: string): string {
  return (
    `Temporal is overloaded: ${c.slowCalls} slow calls, ${c.failedWrites} failed history writes, ${c.retriedTasks} retried tasks in the last ${windowSeconds} s ` +
    `(the dev server's SQLite store takes one write at a time; runs are retried, not lost, but slow). ` +
    `Start fewer runs at once, or use a Temporal cluster (TEMPORAL_ADDRESS). Details: ${logFile}`
  );
}

export function watchTemporalLoad(
  logFile: string,
  options: { windowMs?: number; intervalMs?: number; threshold?: number; onOverload?: (message: string) => void } = {},
): TemporalLoadWatch {
  const windowMs = options.windowMs ?? 60_000;
  let offset = existsSync(logFile) ? statSync(logFile).size : 0;
  const samples: { at: number; counts: OverloadCounts }[] = [];
  let lastWarned = 0;

  const read = () => {
    if (!existsSync(logFile)) return;
    const size = statSync(logFile).size;
    if (size < offset) offset = 0; // rotated or truncated
    if (size === offset) return;
    const fd = openSync(logFile, 'r');
    try {
      const buffer = Buffer.alloc(Math.min(size - offset, 4 * 1024 * 1024));
      const n = readSync(fd, buffer, 0, buffer.length, offset);
      const text = buffer.subarray(0, n).toString('utf8');
      const end = text.lastIndexOf('\n') + 1; // whole lines only
      offset += Buffer.byteLength(text.slice(0, end));
      const counts = countOverload(text.slice(0, end));
      if (counts.slowCalls + counts.failedWrites + counts.retriedTasks > 0) samples.push({ at: Date.now(), counts });
    } finally {
      closeSync(fd);
    }
  };
  const recent = (): OverloadCounts | null => {
    const since = Date.now() - windowMs;
    while (samples.length && samples[0]!.at < since) samples.shift();
    if (!samples.length) return null;
    return samples.reduce(
      (sum, s) => ({
        slowCalls: sum.slowCalls + s.counts.slowCalls,
        failedWrites: sum.failedWrites + s.counts.failedWrites,
        retriedTasks: sum.retriedTasks + s.counts.retriedTasks,
      }),
      { slowCalls: 0, failedWrites: 0, retriedTasks: 0 },
    );
  };
  const describe = () => {
    const c = recent();
    return c ? describeOverload(c, Math.round(windowMs / 1000), logFile) : null;
  };
  const timer = setInterval(() => {
    try {
      read();
    } catch {
      return;
    }
    const c = recent();
    const message = describe();
    // One warning line per window while it lasts, not one per log line; a stray slow call is not
    // worth one.
    if (message && c && c.slowCalls + c.failedWrites + c.retriedTasks >= (options.threshold ?? 5) && Date.now() - lastWarned >= windowMs) {
      lastWarned = Date.now();
      options.onOverload?.(message);
    }
  }, options.intervalMs ?? 2000);
  timer.unref();
  return { recent, describe, stop: () => clearInterval(timer) };
}
