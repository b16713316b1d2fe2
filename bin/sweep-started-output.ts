// What `sweep start` and `sweep rescore` print once the client answered: the JSON, or for an ID
// that exists already the note on what differs and the one line saying nothing started.
import type { StartedSweep } from '../client/sweeps';

/** Prints the answer when it is `--json` or an existing sweep; true when nothing more is to be
 * printed (the caller prints its own "started" line otherwise). `differs` words the note. */
export function printedJsonOrExisting(started: StartedSweep, json: boolean | undefined, differs: (fields: string) => string): boolean {
  if (json) {
    process.stdout.write(`${JSON.stringify(started)}\n`);
    return true;
  }
  if (!started.existing) return false;
  if (started.differences?.length) process.stderr.write(`note: ${differs(started.differences.join(', '))}\n`);
  process.stdout.write(
    `sweep ${started.id} exists already (${started.total} runs); nothing new started. Watch it: driftline sweep status ${started.id}\n`,
  );
  return true;
}
