// Resident memory of a REPL's process group, read from /proc (Linux). The REPL runs in its own
// process group (see ReplProcess), so the group is exactly the shell, `lake env` and Lean.
import { readdirSync, readFileSync, writeFileSync } from 'node:fs';

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
  return groupPids(pgid).reduce((kb, pid) => kb + rssKb(pid), 0) / 1024;
}

/** The group's processes (pids) now: the leader and its descendants in the group, read from
 * /proc/<pid>/task/<tid>/children (a few reads per process of the REPL's tree). Scanning every
 * process in /proc instead costs milliseconds to tens of milliseconds on a busy machine, twice
 * per check, on the event loop every slot shares: it kept the pool below its capacity
 * (docs/benchmarks.md, "Lean pool"). Where the children files are missing, the scan remains. */
function groupPids(pgid: number): number[] {
  const tree = childrenFilesExist() ? descendants(pgid) : undefined;
  if (tree !== undefined) return tree.filter((pid) => pid === pgid || processGroup(pid) === pgid);
  let entries: string[];
  try {
    entries = readdirSync('/proc');
  } catch {
    return [];
  }
  return entries.filter((e) => /^\d+$/.test(e) && processGroup(Number(e)) === pgid).map(Number);
}

/** `root` and every process below it. */
function descendants(root: number): number[] {
  const out: number[] = [];
  const queue = [root];
  while (queue.length > 0 && out.length < 10_000) {
    const pid = queue.shift()!;
    let tasks: string[];
    try {
      tasks = readdirSync(`/proc/${pid}/task`);
    } catch {
      continue; // gone
    }
    out.push(pid);
    for (const tid of tasks) {
      try {
        for (const child of readFileSync(`/proc/${pid}/task/${tid}/children`, 'utf8').split(' '))
          if (child.trim()) queue.push(Number(child));
      } catch {
        // the thread ended meanwhile
      }
    }
  }
  return out;
}

let childrenFiles: boolean | undefined;
function childrenFilesExist(): boolean {
  if (childrenFiles === undefined) {
    try {
      readFileSync(`/proc/${process.pid}/task/${process.pid}/children`, 'utf8');
      childrenFiles = true;
    } catch {
      childrenFiles = false;
    }
  }
  return childrenFiles;
}

/** Resets the peak-resident-memory mark (VmHWM) of every process in group `pgid`, so that a
 * later `groupPeakMb` tells the peak since now; false when the kernel refused (then the peak
 * covers the process's whole life and must not be reported as one statement's). Writing 5 to
 * clear_refs is the kernel's documented way to reset the mark (Linux ≥ 4.0). */
export function resetGroupPeak(pgid: number): boolean {
  const pids = groupPids(pgid);
  if (pids.length === 0) return false;
  try {
    for (const pid of pids) writeFileSync(`/proc/${pid}/clear_refs`, '5');
    return true;
  } catch {
    return false;
  }
}

/** Summed peak resident memory (MB, VmHWM) of the group's processes; 0 when unknown. */
export function groupPeakMb(pgid: number): number {
  let kb = 0;
  for (const pid of groupPids(pgid)) {
    try {
      const match = /^VmHWM:\s+(\d+)\s+kB/m.exec(readFileSync(`/proc/${pid}/status`, 'utf8'));
      if (match) kb += Number(match[1]);
    } catch {
      // exited between listing and reading
    }
  }
  return kb / 1024;
}
