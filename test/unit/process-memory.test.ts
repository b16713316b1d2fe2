// Peak memory of a process group, read from /proc: the mark resets before a statement, so a
// statement's peak is not the process's lifetime peak. Checked on a real child process that
// allocates, frees and waits (Python returns a large freed buffer to the system at once).
import { spawn, type ChildProcess } from 'node:child_process';
import { afterEach, describe, expect, it } from 'vitest';
import { canMeasureRss, groupPeakMb, groupRssMb, resetGroupPeak } from '../../engines/lean/process-memory';

const children: ChildProcess[] = [];
afterEach(() => {
  for (const c of children.splice(0)) c.kill('SIGKILL');
});

/** A Python process in its own group that allocates `mb` MB, frees it, says "freed" and waits. */
async function spikeAndIdle(mb: number): Promise<number> {
  const code = `import sys, time\nb = bytearray(${mb} * 1024 * 1024)\nfor i in range(0, len(b), 4096): b[i] = 1\ndel b\nprint("freed", flush=True)\ntime.sleep(60)\n`;
  const child = spawn('python3', ['-c', code], { detached: true, stdio: ['ignore', 'pipe', 'inherit'] });
  children.push(child);
  await new Promise<void>((resolve, reject) => {
    child.stdout!.on('data', (d: Buffer) => d.toString().includes('freed') && resolve());
    child.on('exit', (code) => reject(new Error(`python exited with ${code}`)));
  });
  return child.pid!;
}

describe.runIf(canMeasureRss())('process group memory', () => {
  it("tells the group's peak, and after a reset only the peak since then", async () => {
    const pgid = await spikeAndIdle(300);
    expect(groupRssMb(pgid)).toBeLessThan(100); // the buffer was returned
    expect(groupPeakMb(pgid)).toBeGreaterThanOrEqual(300);
    expect(resetGroupPeak(pgid)).toBe(true);
    const after = groupPeakMb(pgid);
    expect(after).toBeGreaterThan(0);
    expect(after).toBeLessThan(100);
  });

  it('answers nothing for a group that does not exist', () => {
    expect(resetGroupPeak(2 ** 22 + 12345)).toBe(false);
    expect(groupPeakMb(2 ** 22 + 12345)).toBe(0);
  });
});
