// Trust domains (decision 0017): whose texts a Lean check runs. Texts of different domains never
// share a REPL process (engines/lean/repl-pool.ts), so code that slips past the screen can
// neither forge another domain's verdicts nor leave anything behind for its checks. One home for
// how a domain is named; the entry points and workflows pick the domain, the pool enforces it.

/** driftline's own texts: its formalizer's output in runs nobody's API key started, sweeps'
 * benchmark gold statements, the name tools' lookups. */
export const DRIFTLINE_DOMAIN = 'driftline';

/** Everything one API key sends: its runs (their gold statements and the formalizer's output,
 * which its statement steers) and its checks. Without configured keys, every caller is one
 * anonymous domain. */
export function apiKeyDomain(keyName: string | undefined): string {
  return keyName === undefined ? 'api' : `key:${keyName}`;
}

/** One predictions file: a sweep's predictions cell. */
export function predictionsDomain(sweepId: string, cell: string): string {
  return `predictions:${sweepId}/${cell}`;
}

/** A batch of checks started without an API key (the CLI, the MCP server over stdio). */
export function checksDomain(batchId: string): string {
  return `checks:${batchId}`;
}
