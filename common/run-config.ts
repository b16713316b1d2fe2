// Pure helpers over RunConfig, usable from workflows, the API and the CLI.
import { DEFAULT_RUN_CONFIG, llmTaskQueue, MAX_AGENT_STEPS, type AgentToolName, type RunConfig } from './run-config-schema';
import type { LlmCallPolicy } from './llm-call-policy';
import type { LlmMeter } from './llm-types';
import type { LlmRole } from './llm-roles';

export function resolveRunConfig(partial: Partial<RunConfig> = {}): RunConfig {
  return { ...DEFAULT_RUN_CONFIG, ...partial };
}

/** The workflow type that runs a configuration: the pipeline (`formalize`) or the agent
 * (`formalizeAgent`). Whatever starts runs (API, CLI, sweeps) starts this type. */
export function workflowTypeFor(config: Pick<RunConfig, 'mode'>): 'formalize' | 'formalizeAgent' {
  return config.mode === 'agent' ? 'formalizeAgent' : 'formalize';
}

/** Why an agent configuration cannot run, in the user's terms, or null. */
export function agentConfigProblem(partial: Partial<RunConfig>): string | null {
  const config = resolveRunConfig(partial);
  if (config.mode !== 'agent') return null;
  if (!config.tools.includes('write_file')) return '"tools" must include "write_file": the agent answers by writing the Lean file';
  if (config.maxSteps < 1 || config.maxSteps > MAX_AGENT_STEPS) return `"maxSteps" must be between 1 and ${MAX_AGENT_STEPS}`;
  return null;
}

/** The agent's tools as the paper's factors plus ours: T (draft), F (run_lean), S (inspect_name,
 * resolve_name), R (search_premises), e.g. `agent-TFS-R0` is everything but premise search. */
function agentLabel(config: RunConfig): string {
  const on = (t: AgentToolName) => config.tools.includes(t);
  const factors = `${on('draft') ? 'T' : ''}${on('run_lean') ? 'F' : ''}${on('inspect_name') || on('resolve_name') ? 'S' : ''}${on('search_premises') ? 'R' : ''}`;
  const parts = [`agent-${factors || 'none'}`, `T${config.maxSteps}`];
  if (config.driftContext) parts.push(`ctx-${config.retrieval === 'monolithic' ? `monolithic${config.topK}` : config.retrieval}`);
  if (config.judge) parts.push('judge');
  return parts.join('+');
}

/** A short label for a configuration, used as a search attribute and in reports,
 * e.g. `drift+decomp+ill3+rep3+judge` or `monolithic5+ill0+rep0`. */
export function describeConfig(config: RunConfig): string {
  if (config.mode === 'agent') return agentLabel(config);
  const retrieval = config.retrieval === 'monolithic' ? `monolithic${config.topK}` : config.retrieval;
  const parts = [retrieval];
  if (config.retrieval === 'drift') parts.push(config.decompose ? 'decomp' : 'nodecomp');
  parts.push(config.illustrate ? `ill${config.examples}` : 'ill0');
  parts.push(`rep${config.repairRounds}`);
  if (config.judge) parts.push('judge');
  return parts.join('+');
}

/** The first words of a statement, for the run's memo in the Temporal UI. */
export function statementPreview(statement: string, words = 16): string {
  const all = statement.trim().split(/\s+/);
  return all.slice(0, words).join(' ') + (all.length > words ? ' …' : '');
}

/** What the run's LLM activities are told about it: cache on or off, the sample index, model
 * and temperature overrides, and (for pipeline runs) the budgets checked before each call. */
export function llmMeterFor(config: RunConfig, sample = 0, llm?: LlmCallPolicy): LlmMeter {
  const providers = runProviders(config, llm);
  return {
    cache: config.cache,
    sample,
    ...(config.models && Object.keys(config.models).length ? { models: config.models } : {}),
    ...(Object.keys(providers).length ? { providers } : {}),
    ...(config.temperature !== undefined ? { temperature: config.temperature } : {}),
    ...(config.mode === 'pipeline' ? { tokenBudget: config.tokenBudget } : {}),
    ...(config.costBudgetUsd !== undefined ? { costBudgetUsd: config.costBudgetUsd } : {}),
    ...(llm?.batch ? { batch: llm.batch } : {}),
  };
}

/** The provider of each role for this run: the run's own choice over the deployment's. */
export function runProviders(config: Pick<RunConfig, 'providers'>, llm?: LlmCallPolicy): Partial<Record<LlmRole, string>> {
  return { ...(llm?.providers ?? {}), ...(config.providers ?? {}) };
}

/** The task queue of a role's LLM activities in this run: its provider's (`llm-<name>`), or
 * undefined (the workflow's own queue) when neither the run nor the deployment names one. */
export function llmQueueFor(role: LlmRole, config: Pick<RunConfig, 'providers'>, llm?: LlmCallPolicy): string | undefined {
  const provider = runProviders(config, llm)[role];
  return provider ? llmTaskQueue(provider) : undefined;
}

/** Why a run's provider choices cannot run here (a name the deployment does not have), or null. */
export function runProvidersProblem(partial: Partial<Pick<RunConfig, 'providers'>>, known: string[]): string | null {
  for (const [role, name] of Object.entries(partial.providers ?? {})) {
    if (name && !known.includes(name))
      return `"providers.${role}": no LLM provider "${name}" is configured (configured: ${known.map((k) => `"${k}"`).join(', ') || 'none'})`;
  }
  return null;
}
