// The activity factory: each stage is a plain async function closed over the clients it is
// handed (the Temporal samples' pattern), so tests pass fakes and nothing reaches for config.
import { INDEX_FAILURE, LEAN_FAILURE } from '../common/failures';
import type { LeanActivities, MainActivities } from '../common/activities';
import type {
  CompileResult,
  EquivalenceInput,
  EquivalenceResult,
  InspectNameInput,
  LeanMessage,
  NameInfo,
  ResolveNameInput,
  ResolveNameResult,
} from '../common/lean-types';
import type { LlmMeter, LlmUsageReport } from '../common/llm-types';
import type { Example, IllustrateInput, RetrieveInput, RetrieveOutput, SubQuery } from '../common/retrieval-types';
import type { FormalizeStageInput, JudgeInput, JudgeVerdict, RepairStageInput } from '../common/run-types';
import { activityFailure, mapEngineErrors, toTemporalFailure } from './failures';
import { withHeartbeat } from './heartbeat';
import { meteredCall, usageReport, type LedgerTotals } from './llm-meter';
import type { LlmClient } from '../engines/llm/client';
import { decomposeStatement, formalizeStatement, judgeStatement, repairStatement } from '../engines/llm/stages';
import { UnknownLibraryError, type IndexRegistry } from '../engines/retrieval/index-registry';
import type { PremiseIndex } from '../engines/retrieval/premise-index';
import type { RetrievalUse } from '../engines/retrieval/rerank';
import { retrievePremises } from '../engines/retrieval/retrieve-premises';
import { illustrate } from '../engines/retrieval/illustrate';
import type { LeanRunner } from '../engines/lean/runner-contract';
import { compileStatement } from '../engines/lean/compile';
import { checkEquivalence } from '../engines/lean/equivalence';
import type { NameDirectory } from '../engines/lean/name-directory';
import { inspectName, resolveName } from '../engines/lean/name-tools';
import type { SafetyPolicy } from '../engines/lean/statement-safety';
import type { IndexBuildActivities } from '../common/index-build';
import { createIndexBuildActivities } from './index-build';
import { createAgentActivities } from './agent';
import { screenText } from '../engines/lean/screen-text';

/** An engine call as an activity runs it: heartbeating, cancellable, engine errors mapped. */
function engineCall<T>(work: (signal?: AbortSignal) => Promise<T>): Promise<T> {
  return mapEngineErrors(withHeartbeat(work));
}

export interface MainActivityDeps {
  llm: LlmClient;
  /** The LLM call ledger (reply cache and tokens, in the results database): budgets and usage. */
  ledger?: LedgerTotals;
  indexes: IndexRegistry;
  /** The translator model behind the agent's `draft` tool (optional). */
  translator?: LlmClient;
}

export interface LeanActivityDeps {
  lean: LeanRunner;
  timeoutMs?: number;
  /** Library names for resolveName (read from the corpora on the Lean worker). */
  names?: NameDirectory;
  /** What may reach Lean; default DEFAULT_SAFETY_POLICY. */
  policy?: SafetyPolicy;
  /** Budget of one equivalence check. Default 5 minutes. */
  equivalenceTimeoutMs?: number;
  /** Time for one name lookup. Default 60 s. */
  toolTimeoutMs?: number;
}

/** The library's index for `use`: the given version (pinned by an earlier stage of the run),
 * or the one its alias names now. */
async function openIndex(
  indexes: IndexRegistry,
  library: string,
  use: RetrievalUse = 'monolithic',
  version?: string,
): Promise<{ index: PremiseIndex; version: string }> {
  try {
    if (version) {
      indexes.spec(library); // an unknown library fails the same way either way
      return { index: await indexes.wrappedVersion(version, use), version };
    }
    const opened = await indexes.open(library, use);
    return { index: opened.index, version: opened.version };
  } catch (err) {
    // Only an unknown library is a caller's mistake; a store that is down (or an embedder's
    // error) keeps its own type, so the retry policy carries the run through an outage.
    if (err instanceof UnknownLibraryError) throw activityFailure(INDEX_FAILURE.unknownLibrary, err.message);
    throw toTemporalFailure(err);
  }
}

export function createActivities(deps: MainActivityDeps): MainActivities & IndexBuildActivities {
  return {
    // The durable index build (workflow buildIndex) runs on the main queue too.
    ...createIndexBuildActivities(deps.indexes),
    ...createAgentActivities({
      llm: deps.llm,
      ...(deps.translator ? { translator: deps.translator } : {}),
      ...(deps.ledger ? { ledger: deps.ledger } : {}),
    }),
    async decompose({ statement, meter }: { statement: string; meter?: LlmMeter }): Promise<SubQuery[]> {
      return meteredCall(deps.ledger, meter, () => engineCall((signal) => decomposeStatement(deps.llm, statement, signal)));
    },

    async llmUsage({ runId }: { runId: string }): Promise<LlmUsageReport> {
      return usageReport(deps.ledger, runId);
    },

    // Retrieval heartbeats too (opening an index may build it first): a worker killed during it
    // is noticed within the heartbeat timeout, not after the whole start-to-close timeout.
    async retrieve(input: RetrieveInput): Promise<RetrieveOutput> {
      return withHeartbeat(async () => {
        // DRIFT (top-1 per sub-query) and monolithic top-k may re-rank differently (rerank.ts).
        // A sweep pins its version (input.indexVersion); otherwise the alias's current one.
        const { index, version } = await openIndex(
          deps.indexes,
          input.library,
          input.mode === 'drift' ? 'drift' : 'monolithic',
          input.indexVersion,
        );
        return { ...(await mapEngineErrors(retrievePremises(index, input))), indexVersion: version };
      });
    },

    async illustrate(input: IllustrateInput): Promise<Example[]> {
      return withHeartbeat(async () => {
        const { index } = await openIndex(deps.indexes, input.library, 'monolithic', input.indexVersion);
        return await mapEngineErrors(illustrate(index, input));
      });
    },

    async formalize(input: FormalizeStageInput): Promise<string> {
      return meteredCall(deps.ledger, input.meter, () => engineCall((signal) => formalizeStatement(deps.llm, input, signal)));
    },

    async repair(input: RepairStageInput): Promise<string> {
      return meteredCall(deps.ledger, input.meter, () => engineCall((signal) => repairStatement(deps.llm, input, signal)));
    },

    // The name both stages had before runs called them by theirs ('formalize-repair-activities'
    // patch); kept so runs started before it finish and their histories replay.
    async draftStatement(input: FormalizeStageInput): Promise<string> {
      return meteredCall(deps.ledger, input.meter, () => engineCall((signal) => formalizeStatement(deps.llm, input, signal)));
    },

    // The judge engine keeps the rule: never faithful unless Lean accepted the statement.
    async judge(input: JudgeInput): Promise<JudgeVerdict> {
      const { rubric, ...judged } = input;
      return meteredCall(deps.ledger, input.meter, () =>
        engineCall((signal) => judgeStatement(deps.llm, judged, signal, rubric !== undefined ? { rubric } : {})),
      );
    },
  };
}

export function createLeanActivities(deps: LeanActivityDeps): LeanActivities {
  return {
    async compile({ code, domain }: { code: string; domain?: string }): Promise<CompileResult> {
      return engineCall((signal) =>
        compileStatement(deps.lean, code, {
          signal,
          timeoutMs: deps.timeoutMs,
          policy: deps.policy,
          ...(domain !== undefined ? { domain } : {}),
        }),
      );
    },

    async screenStatement({ code }: { code: string }): Promise<LeanMessage | null> {
      const screened = screenText({ statement: code, as: 'formalizer' }, deps.policy);
      return screened.accepted ? null : screened.message;
    },

    async inspectName(input: InspectNameInput): Promise<NameInfo> {
      return engineCall((signal) => inspectName(deps.lean, input, { signal, timeoutMs: deps.toolTimeoutMs ?? 60_000 }));
    },

    async resolveName(input: ResolveNameInput): Promise<ResolveNameResult> {
      if (!deps.names)
        throw activityFailure(LEAN_FAILURE.namesNotConfigured, 'resolveName: this Lean worker has no library names configured.');
      const known = deps.names.libraries;
      if (!known.includes(input.library))
        throw activityFailure(INDEX_FAILURE.unknownLibrary, `unknown library "${input.library}"; known: ${known.join(', ') || '(none)'}`);
      // Reading the corpus can fail for other reasons (a file being replaced): retried as they are.
      const names = await mapEngineErrors(deps.names.names(input.library));
      return engineCall((signal) => resolveName(deps.lean, names, input, { signal, timeoutMs: deps.toolTimeoutMs ?? 60_000 }));
    },

    async equivalence(input: EquivalenceInput): Promise<EquivalenceResult> {
      return engineCall((signal) =>
        checkEquivalence(deps.lean, input, { timeoutMs: deps.equivalenceTimeoutMs ?? 300_000, policy: deps.policy, signal }),
      );
    },
  };
}
