// A PostgreSQL server of its own in a data directory, for `npm run cluster` when no server is given:
// Debian's server binaries, initdb once, started with pg_ctl on loopback only (trust auth, which
// is safe only because nothing outside this machine can reach it). As root the server runs as the
// `postgres` user, as PostgreSQL requires.
import { execFileSync } from 'node:child_process';
import { chownSync, existsSync, mkdirSync, readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';

const DEBIAN_ROOT = '/usr/lib/postgresql';

/** The newest PostgreSQL server binaries installed (Debian's layout), or undefined. */
export function findPostgresBin(): string | undefined {
  if (!existsSync(DEBIAN_ROOT)) return undefined;
  const versions = readdirSync(DEBIAN_ROOT)
    .filter((v) => existsSync(join(DEBIAN_ROOT, v, 'bin', 'initdb')))
    .sort((a, b) => Number(b) - Number(a));
  return versions[0] ? join(DEBIAN_ROOT, versions[0], 'bin') : undefined;
}

export interface LocalPostgres {
  /** postgres://USER@127.0.0.1:PORT/postgres */
  url: string;
  dir: string;
  /** Stops the server (fast shutdown: transactions rolled back, data kept). */
  stop(mode?: 'fast' | 'immediate'): void;
  /** Starts it again on the same port with the same data. */
  start(): void;
  /** The server's process id while it runs. */
  pid(): number | undefined;
}

export interface LocalPostgresOptions {
  /** Holds the data folder, the socket and the log. */
  dir: string;
  port: number;
  user?: string;
  /** false: fsync off (tests): a crash of the machine may lose data, a crash of PostgreSQL does
   * not (commits stay synchronous: a test that kills PostgreSQL must not lose acknowledged
   * commits, which no Temporal service expects). */
  durable?: boolean;
  /** More server settings (`name=value`), e.g. synchronous_commit=off. */
  settings?: string[];
}

export function localPostgres(options: LocalPostgresOptions): LocalPostgres {
  const bin = findPostgresBin();
  if (!bin)
    throw new Error(
      `PostgreSQL server binaries not found under ${DEBIAN_ROOT}: install Debian's \`postgresql\` package, or give a server's URL (--postgres).`,
    );
  const user = options.user ?? 'temporal';
  const dir = options.dir;
  const data = join(dir, 'data');
  const asRoot = process.getuid?.() === 0;
  mkdirSync(dir, { recursive: true });
  if (asRoot) {
    const uid = Number(execFileSync('id', ['-u', 'postgres'], { encoding: 'utf8' }).trim());
    const gid = Number(execFileSync('id', ['-g', 'postgres'], { encoding: 'utf8' }).trim());
    chownSync(dir, uid, gid);
  }
  const run = (cmd: string, args: string[]) => {
    const [file, argv] = asRoot ? ['runuser', ['-u', 'postgres', '--', join(bin, cmd), ...args]] : [join(bin, cmd), args];
    execFileSync(file, argv, { stdio: ['ignore', 'pipe', 'pipe'], cwd: dir });
  };
  if (!existsSync(join(data, 'PG_VERSION'))) {
    run('initdb', ['-D', data, '-A', 'trust', '-U', user, '-E', 'UTF8', ...(options.durable === false ? ['--no-sync'] : [])]);
  }
  const serverOptions = [
    `-p ${options.port}`,
    `-k ${dir}`,
    '-c listen_addresses=127.0.0.1',
    // Four Temporal services and driftline's processes each hold a pool of connections.
    '-c max_connections=300',
    ...(options.durable === false ? ['-c fsync=off', '-c full_page_writes=off'] : []),
    ...(options.settings ?? []).map((setting) => `-c ${setting}`),
  ].join(' ');
  const handle: LocalPostgres = {
    url: `postgres://${user}@127.0.0.1:${options.port}/postgres`,
    dir,
    start() {
      run('pg_ctl', ['-D', data, '-l', join(dir, 'server.log'), '-w', '-t', '60', '-o', serverOptions, 'start']);
    },
    pid() {
      try {
        return Number(readFileSync(join(data, 'postmaster.pid'), 'utf8').split('\n')[0]) || undefined;
      } catch {
        return undefined;
      }
    },
    stop(mode = 'fast') {
      run('pg_ctl', ['-D', data, '-m', mode, '-w', '-t', '60', 'stop']);
    },
  };
  // A server left running by an earlier start (killed recipe) is stopped first: its port may differ.
  if (existsSync(join(data, 'postmaster.pid'))) {
    try {
      handle.stop('fast');
    } catch {
      // not running after all (a stale pid file): pg_ctl start handles that
    }
  }
  handle.start();
  return handle;
}
