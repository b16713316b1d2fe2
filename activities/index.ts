// The activity factory: each stage is a plain async function closed over the clients it is
// handed (the Temporal samples' pattern), so tests pass fakes and nothing reaches for config.
import { ApplicationFailure } from '@temporalio/common';
import type {
  CompileResult,
  Example,
  IllustrateInput,
  JudgeInput,
  JudgeVerdict,
  LeanActivities,
  MainActivities,
  RetrieveInput,
  RetrieveOutput,
  SubQuery,
  FormalizeStageInput,
} from '../common/types';
import { withHeartbeat } from './heartbeat';
import type { LlmClient } from './llm/client';
import { decomposeStatement, formalizeStatement, judgeStatement } from './llm/stages';
import type { IndexRegistry } from './retrieval/index-store';
import type { PremiseIndex } from './retrieval/premise-index';
import { retrievePremises } from './retrieval/retrieve-premises';
import { illustrate as chooseExamples } from './retrieval/greedy-examples';
import type { LeanRunner } from './lean/lean-runner';
import { compileStatement } from './lean/compile';
import type { IndexBuildActivities } from '../common/index-build';
import { createIndexBuildActivities } from './retrieval/stores/build-activities';

export interface MainActivityDeps {
  llm: LlmClient;
  indexes: IndexRegistry;
}

export interface LeanActivityDeps {
  lean: LeanRunner;
  timeoutMs?: number;
}

async function openIndex(indexes: IndexRegistry, library: string): Promise<PremiseIndex> {
  try {
    return await indexes.get(library);
  } catch (err) {
    throw ApplicationFailure.nonRetryable((err as Error).message, 'UnknownLibrary');
  }
}

export function createActivities(deps: MainActivityDeps): MainActivities & IndexBuildActivities {
  return {
    // The durable index build (workflow buildIndex) runs on the main queue too.
    ...createIndexBuildActivities(deps.indexes),
    async decompose({ statement }: { statement: string }): Promise<SubQuery[]> {
      return withHeartbeat((signal) => decomposeStatement(deps.llm, statement, signal));
    },

    async retrieve(input: RetrieveInput): Promise<RetrieveOutput> {
      const index = await openIndex(deps.indexes, input.library);
      return await retrievePremises(index, input);
    },

    async illustrate(input: IllustrateInput): Promise<Example[]> {
      const index = await openIndex(deps.indexes, input.library);
      return await chooseExamples(index, input);
    },

    async formalize(input: FormalizeStageInput): Promise<string> {
      return withHeartbeat((signal) => formalizeStatement(deps.llm, input, signal));
    },

    async judge(input: JudgeInput): Promise<JudgeVerdict> {
      if (input.checked === false) {
        // Without Lean nothing is known to compile: grade the meaning, but never call it faithful.
        const verdict = await withHeartbeat((signal) => judgeStatement(deps.llm, { ...input, compiled: true }, signal));
        return {
          ...verdict,
          faithful: false,
          explanation: `${verdict.explanation} (Not compiled: no Lean REPL is configured, so the statement cannot count as faithful.)`,
        };
      }
      return withHeartbeat((signal) => judgeStatement(deps.llm, input, signal));
    },
  };
}

export function createLeanActivities(deps: LeanActivityDeps): LeanActivities {
  return {
    async compile({ code }: { code: string }): Promise<CompileResult> {
      return withHeartbeat((signal) => compileStatement(deps.lean, code, { signal, timeoutMs: deps.timeoutMs }));
    },
  };
}
