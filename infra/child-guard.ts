// Children that die with the stack. `setpriv --pdeathsig` (util-linux) asks the kernel to signal
// a child when its parent dies, even by SIGKILL, which no handler in the parent can see. Where
// setpriv is missing, the pid file (stack-pids.ts) lets the next start clean up instead.
import { existsSync } from 'node:fs';

const SETPRIV = ['/usr/bin/setpriv', '/bin/setpriv'].find((p) => existsSync(p));

/** The command and arguments that run `command` so it gets `signal` when its parent dies. */
export function dieWithParent(command: string, args: string[], signal: 'KILL' | 'TERM'): [string, string[]] {
  if (!SETPRIV || process.platform !== 'linux') return [command, args];
  return [SETPRIV, ['--pdeathsig', signal, '--', command, ...args]];
}
