// Resident memory of a REPL's process group, read from /proc (Linux). The REPL runs in its own
// process group (see ReplProcess), so the group is exactly the shell, `lake env` and Lean.
import { readdirSync, readFileSync } from 'node:fs';

/** Whether /proc can tell us process memory on this platform. */
export function canMeasureRss(): boolean {
  try {
    return /VmRSS/.test(readFileSync('/proc/self/status', 'utf8'));
  } catch {
    return false;
  }
}

/** The process group of `pid`, from /proc/<pid>/stat (field 5), or undefined when gone. */
function processGroup(pid: number): number | undefined {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    // The command name (field 2) may contain spaces and parentheses: split after the last ')'.
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    return Number(fields[2]);
  } catch {
    return undefined;
  }
}

function rssKb(pid: number): number {
  try {
    const match = /^VmRSS:\s+(\d+)\s+kB/m.exec(readFileSync(`/proc/${pid}/status`, 'utf8'));
    return match ? Number(match[1]) : 0;
  } catch {
    return 0; // exited between listing and reading
  }
}

/** Summed resident memory (MB) of every process in process group `pgid`; 0 when unknown. */
export function groupRssMb(pgid: number): number {
  let entries: string[];
  try {
    entries = readdirSync('/proc');
  } catch {
    return 0;
  }
  let kb = 0;
  for (const entry of entries) {
    if (!/^\d+$/.test(entry)) continue;
    const pid = Number(entry);
    if (processGroup(pid) === pgid) kb += rssKb(pid);
  }
  return kb / 1024;
}
