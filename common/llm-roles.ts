// The roles an LLM plays in a run, listed once. The run configuration's models and providers per
// role, the LLM client's routing and reply limits, and the deployment's configuration (a provider,
// a model and a `max_tokens` per role, each with its environment variable) are derived from it.

export const LLM_ROLES = ['decomposer', 'formalizer', 'judge', 'agent', 'translator'] as const;
export type LlmRole = (typeof LLM_ROLES)[number];

/** What each role does, as a verb phrase (the configuration reference shows these). */
export const LLM_ROLE_DESCRIPTIONS: Record<LlmRole, string> = {
  decomposer: 'splits a statement into its atomic concepts, in the decompose stage',
  formalizer: 'writes the Lean statement and repairs it, in the formalize and repair stages',
  judge: 'grades whether the Lean statement says what the informal one says, in the judge stage',
  agent: 'chooses the tools step by step in agent mode',
  translator: "drafts a Lean statement for the agent's `draft` tool, a specialised model on its own endpoint",
};

/** `max_tokens` per role when none is configured: enough for the reply, not a novel. */
export const DEFAULT_MAX_TOKENS: Record<LlmRole, number> = {
  decomposer: 1024,
  formalizer: 2048,
  judge: 1024,
  agent: 2048,
  translator: 2048,
};
