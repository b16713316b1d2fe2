// The workers' Temporal SDK logger: a failure (an activity that failed, e.g. a run with no LLM
// configured) is one line in the stack's terminal, its stack trace only in the log file.
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { workerLogger } from '../../infra/logging';

const dirs: string[] = [];
afterEach(() => {
  vi.restoreAllMocks();
  for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
});

function captureStderr(): string[] {
  const lines: string[] = [];
  vi.spyOn(process.stderr, 'write').mockImplementation((chunk: string | Uint8Array) => {
    lines.push(String(chunk));
    return true;
  });
  return lines;
}

describe('workerLogger', () => {
  it('puts one line per failure in the terminal and the stack trace in the log file', () => {
    const dir = mkdtempSync(join(tmpdir(), 'driftline-wlog-'));
    dirs.push(dir);
    const file = join(dir, 'logs', 'worker.log');
    const logger = workerLogger(file);
    const terminal = captureStderr();
    const error = new Error('No LLM is configured. Set OPENAI_BASE_URL …');
    logger.warn('Activity failed', { error, activityType: 'decompose', workflowId: 'formalize-1', attempt: 1, durationMs: 3 });
    logger.warn('Worker state changed', { state: 'DRAINING' });
    const out = terminal.join('');
    expect(out).toContain(
      `Activity failed: No LLM is configured. Set OPENAI_BASE_URL … (activityType=decompose workflowId=formalize-1 attempt=1); stack trace in ${file}`,
    );
    expect(out).not.toMatch(/\n\s+at /);
    expect(out).toContain('Worker state changed');
    const logged = readFileSync(file, 'utf8');
    expect(logged).toContain('WARN Activity failed');
    expect(logged).toContain(error.stack!.split('\n')[1]!.trim());
  });

  it('drops the messages every activity-only worker prints', () => {
    const terminal = captureStderr();
    workerLogger().warn('No workflows registered, not polling for workflow tasks');
    expect(terminal).toEqual([]);
  });
});
