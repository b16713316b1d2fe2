// Typed search-attribute keys, shared by the workflow (which sets them), the client (which
// starts runs with them) and the dev server setup (which registers them).
import { defineSearchAttributeKey, SearchAttributeType } from '@temporalio/common';

/** Search attributes registered on the dev server and set by the workflow. */
export const SEARCH_ATTRIBUTES = {
  stage: 'DriftlineStage',
  outcome: 'DriftlineOutcome',
  library: 'DriftlineLibrary',
  config: 'DriftlineConfig',
  sweep: 'DriftlineSweep',
  index: 'DriftlineIndex',
} as const;

export const STAGE_KEY = defineSearchAttributeKey(SEARCH_ATTRIBUTES.stage, SearchAttributeType.KEYWORD);
export const OUTCOME_KEY = defineSearchAttributeKey(SEARCH_ATTRIBUTES.outcome, SearchAttributeType.KEYWORD);
export const LIBRARY_KEY = defineSearchAttributeKey(SEARCH_ATTRIBUTES.library, SearchAttributeType.KEYWORD);
export const CONFIG_KEY = defineSearchAttributeKey(SEARCH_ATTRIBUTES.config, SearchAttributeType.KEYWORD);
export const SWEEP_KEY = defineSearchAttributeKey(SEARCH_ATTRIBUTES.sweep, SearchAttributeType.KEYWORD);

export const INDEX_KEY = defineSearchAttributeKey(SEARCH_ATTRIBUTES.index, SearchAttributeType.KEYWORD);

export const ALL_SEARCH_ATTRIBUTE_KEYS = [STAGE_KEY, OUTCOME_KEY, LIBRARY_KEY, CONFIG_KEY, SWEEP_KEY, INDEX_KEY];
