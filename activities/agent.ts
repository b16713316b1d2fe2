// The agent's main-queue activities: one LLM step, and the `draft` tool (the translator model).
// The other tools are the Lean worker's activities and `retrieve`, called by the workflow.
import type { ApplicationFailure } from '@temporalio/common';
import type { AgentStepInput, AgentStepOutput } from '../common/agent-types';
import type { LlmMeter } from '../common/llm-types';
import { AGENT_FAILURE } from '../common/failures';
import { withHeartbeat } from './heartbeat';
import { activityFailure, mapEngineErrors } from './failures';
import { meteredCall, type LedgerTotals } from './llm-meter';
import type { LlmClient } from '../engines/llm/client';
import { runAgentStep } from '../engines/agent/step';
import { draftWithTranslator } from '../engines/agent/draft';

function translatorMissing(): ApplicationFailure {
  return activityFailure(
    AGENT_FAILURE.translatorNotConfigured,
    'The `draft` tool needs a translator model: set DRIFTLINE_TRANSLATOR_BASE_URL (an OpenAI-compatible endpoint), ' +
      'DRIFTLINE_MODEL_TRANSLATOR and, if it needs one, DRIFTLINE_TRANSLATOR_API_KEY; or leave `draft` out of `tools`.',
  );
}

export interface AgentActivityDeps {
  llm: LlmClient;
  /** The translator behind `draft`; absent or unconfigured: `draft` cannot be offered. */
  translator?: LlmClient;
  ledger?: LedgerTotals;
}

export function createAgentActivities(deps: AgentActivityDeps) {
  return {
    async agentStep(input: AgentStepInput): Promise<AgentStepOutput> {
      // Offering a tool that cannot work would skew the run; refuse before paying for a step.
      if (input.tools.includes('draft') && !deps.translator?.configured) throw translatorMissing();
      // The agent keeps its own token budget (the loop ends budget-exhausted); the ledger records.
      return meteredCall(undefined, input.meter, () => mapEngineErrors(withHeartbeat((signal) => runAgentStep(deps.llm, input, signal))));
    },

    async draft({ statement, meter }: { statement: string; meter?: LlmMeter }): Promise<string> {
      if (!deps.translator?.configured) throw translatorMissing();
      return meteredCall(undefined, meter, () =>
        mapEngineErrors(withHeartbeat((signal) => draftWithTranslator(deps.translator!, statement, signal))),
      );
    },
  };
}
