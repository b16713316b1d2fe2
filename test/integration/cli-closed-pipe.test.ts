// `driftline … | head`: when the reader closes the pipe, the command ends quietly (exit 0, no
// EPIPE stack trace). The child writes far more than a pipe holds, so it is still writing when
// the pipe closes.
import { spawn } from 'node:child_process';
import { createRequire } from 'node:module';
import { pathToFileURL } from 'node:url';
import { describe, expect, it } from 'vitest';

const TSX = pathToFileURL(createRequire(import.meta.url).resolve('tsx')).href;
const MODULE = new URL('../../bin/closed-pipe.ts', import.meta.url).href;

function writeIntoClosedPipe(handled: boolean): Promise<{ code: number | null; stderr: string }> {
  const script = `${handled ? `const m = await import(${JSON.stringify(MODULE)}); m.exitQuietlyOnClosedPipe();` : ''}
    const line = 'x'.repeat(1000) + '\\n';
    const more = () => { while (process.stdout.write(line)) {} process.stdout.once('drain', more); };
    more();`;
  return new Promise((resolve) => {
    const child = spawn(process.execPath, ['--import', TSX, '--input-type=module', '-e', script], { stdio: ['ignore', 'pipe', 'pipe'] });
    let stderr = '';
    child.stderr.on('data', (d) => (stderr += d));
    child.stdout.once('data', () => child.stdout.destroy());
    child.on('close', (code) => resolve({ code, stderr }));
  });
}

describe('a closed output pipe', () => {
  it('ends the command quietly', async () => {
    const { code, stderr } = await writeIntoClosedPipe(true);
    expect(stderr).toBe('');
    expect(code).toBe(0);
  });

  it('(without the handler the same writes die with EPIPE: the test can fail)', async () => {
    const { code, stderr } = await writeIntoClosedPipe(false);
    expect(stderr).toMatch(/EPIPE/);
    expect(code).not.toBe(0);
  });
});
