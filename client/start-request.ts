// Checking a run's start request, for every door into runs (the API's POST /v1/formalizations,
// the MCP tool `formalize`, the CLI's `formalize`): the rules across fields, on what the stack
// serves. A use case, so it lives in client/ (decision 0019); the rules it combines that
// workflows also read (the agent's, the providers') stay in common/run-config.ts.
import type { RunConfig } from '../common/run-config-schema';
import { agentConfigProblem, runProvidersProblem } from '../common/run-config';

/** How an operator adds a library the stack does not serve: the workers' setting, not the
 * client's (every door that refuses an unknown library ends with this). */
export function addLibraryHint(library: string): string {
  return (
    `To add one: list its corpus (JSONL, one declaration a line, docs/retrieval.md#libraries) in DRIFTLINE_LIBRARIES=${library}=path/to/corpus.jsonl ` +
    `(comma separated, beside the others), restart the workers, and build its index: npx driftline index build --library ${library} --corpus path/to/corpus.jsonl`
  );
}

/** Why a run cannot be started as asked, with the HTTP status that says whose move it is (503:
 * the server has no library yet; 400: the request), or null. The one list of the rules across
 * fields that every door into runs applies; the schema (or the CLI's flags) checks each field on
 * its own first. */
export function startRequestProblem(
  request: { library?: string; config?: Partial<RunConfig>; goldPremises?: string[] },
  served: { libraries: readonly string[]; defaultLibrary: string; providerNames?: readonly string[] },
): { status: 400 | 503; message: string } | null {
  if (served.libraries.length === 0) {
    return {
      status: 503,
      message:
        "no library is served yet: the default library's data has not been pulled (`npx driftline data pull`); GET /readyz says what is missing",
    };
  }
  const library = request.library ?? served.defaultLibrary;
  if (!served.libraries.includes(library))
    return {
      status: 400,
      message: `unknown library "${library}"; known: ${served.libraries.join(', ')}. ${addLibraryHint(library)}`,
    };
  if (request.config?.retrieval === 'oracle' && !request.goldPremises?.length)
    return { status: 400, message: 'retrieval "oracle" needs "goldPremises"' };
  const agentProblem = agentConfigProblem(request.config ?? {});
  if (agentProblem) return { status: 400, message: agentProblem };
  const providerProblem = served.providerNames ? runProvidersProblem(request.config ?? {}, [...served.providerNames]) : null;
  if (providerProblem) return { status: 400, message: providerProblem };
  return null;
}
