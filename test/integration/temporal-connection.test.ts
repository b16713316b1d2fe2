// A Temporal client closed while a call is being retried: with the SDK's default retry
// interceptor the retry's timer throws "Channel has been shut down" (uncaught; it crashed the CLI
// and failed test runs); with infra/temporal-connection.ts the call rejects with CANCELLED.
import { execFile } from 'node:child_process';
import { createServer } from 'node:net';
import type { AddressInfo } from 'node:net';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';

const SCRIPT = fileURLToPath(new URL('../fixtures/scripts/close-while-retrying.ts', import.meta.url));

/** A loopback port where nothing listens (it was free a moment ago). */
async function refusingPort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const { port } = server.address() as AddressInfo;
  await new Promise<void>((r) => server.close(() => r()));
  return port;
}

function run(port: number, which: 'sdk' | 'safe'): Promise<{ code: number | null; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    execFile(process.execPath, ['--import', 'tsx', SCRIPT, String(port), which], { timeout: 30_000 }, (err, stdout, stderr) => {
      resolve({ code: err ? ((err as { code?: number }).code ?? 1) : 0, stdout, stderr });
    });
  });
}

describe('closing a Temporal connection while a call is being retried', () => {
  it("reproduces the SDK's uncaught error with its default retry interceptor", async () => {
    const result = await run(await refusingPort(), 'sdk');
    expect(result.code).not.toBe(0);
    expect(result.stderr).toContain('Channel has been shut down');
    expect(result.stderr).toMatch(/grpc-retry/);
  });

  it('ends the call with CANCELLED, nothing uncaught, with the close-safe interceptor', async () => {
    const result = await run(await refusingPort(), 'safe');
    expect(result.stderr).not.toContain('Channel has been shut down');
    expect(result.code).toBe(0);
    expect(result.stdout).toMatch(
      /attempts before close: [1-9]\d*; call rejected: code 1: .*the Temporal connection was closed \(Channel has been shut down\)/,
    );
  });
});
