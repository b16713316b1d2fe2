// Two workers on one data directory open the results file at the same time. Putting a new file
// in WAL mode needs the file to itself, and SQLite does not wait for that, so the second open
// failed with "database is locked" (an LLM worker died of it in a loaded run). Here another
// process holds the new file's write lock for a moment: the open waits for it and the file is
// in WAL mode after.
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { afterEach, describe, expect, it } from 'vitest';
import { openSqlite } from '../../engines/results/sqlite';

const betterSqlite = createRequire(import.meta.url).resolve('better-sqlite3');
const cleanups: (() => void)[] = [];
afterEach(() => {
  for (const c of cleanups.splice(0)) c();
});

/** Another process that takes the file's write lock (BEGIN IMMEDIATE), holds it, and lets go. */
async function holdWriteLock(file: string, holdMs: number): Promise<ChildProcess> {
  const source = `
    const Database = require(${JSON.stringify(betterSqlite)});
    const db = new Database(${JSON.stringify(file)});
    db.exec('BEGIN IMMEDIATE');
    console.log('locked');
    Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, ${holdMs});
    db.exec('COMMIT');
    db.close();`;
  const child = spawn(process.execPath, ['-e', source], { stdio: ['ignore', 'pipe', 'inherit'] });
  cleanups.push(() => child.kill('SIGKILL'));
  await new Promise<void>((resolve, reject) => {
    child.stdout!.on('data', (chunk: Buffer) => chunk.toString().includes('locked') && resolve());
    child.on('exit', (code) => reject(new Error(`the lock holder exited (${code}) before locking`)));
  });
  return child;
}

describe('the SQLite results file', () => {
  it('opens a new file while another process holds its write lock, and puts it in WAL mode', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'driftline-sqlite-'));
    cleanups.push(() => rmSync(dir, { recursive: true, force: true }));
    const file = join(dir, 'results.sqlite');
    // A new file in SQLite's default (rollback journal) mode, as the first process leaves it.
    const first = new Database(file);
    first.exec('CREATE TABLE t (x INTEGER)');
    first.close();

    const holder = await holdWriteLock(file, 800);
    const driver = openSqlite(file);
    try {
      expect(holder.exitCode === null || holder.exitCode === 0).toBe(true);
      expect(await driver.all<{ journal_mode: string }>('PRAGMA journal_mode')).toEqual([{ journal_mode: 'wal' }]);
      await driver.run('INSERT INTO t (x) VALUES (?)', [1]);
      expect(await driver.all('SELECT x FROM t')).toEqual([{ x: 1 }]);
    } finally {
      await driver.close();
    }
  });
});
