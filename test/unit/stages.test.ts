// The stage registry (common/stages.ts): every list of stages and activities derives from it.
import { describe, expect, it } from 'vitest';
import { isBookkeeping, isStageTool, LLM_ACTIVITY_NAMES, STAGE_LABELS, STAGE_NAMES, stageOfActivity } from '../../common/stages';
import { CSV_COLUMNS } from '../../engines/results/export';

describe('the stage registry', () => {
  it('orders the stages and words each, with the run markers', () => {
    expect(STAGE_NAMES).toEqual(['decompose', 'retrieve', 'illustrate', 'formalize', 'agent', 'compile', 'repair', 'judge']);
    expect(Object.keys(STAGE_LABELS)).toEqual(['starting', ...STAGE_NAMES, 'done']);
    expect(STAGE_LABELS.compile).toBe('Compile with Lean');
  });

  it('gives each activity its stage; helpers are named beside their stage, bookkeeping has none', () => {
    expect(stageOfActivity('resolveName')).toBe('repair');
    expect(stageOfActivity('equivalence')).toBe('judge');
    expect(stageOfActivity('draftStatement')).toBe('formalize');
    expect(stageOfActivity('noSuchActivity')).toBeUndefined();
    expect(isBookkeeping('llmUsage')).toBe(true);
    expect(isBookkeeping('compile')).toBe(false);
    expect([isStageTool('compile'), isStageTool('draftStatement'), isStageTool('resolveName'), isStageTool('other')]).toEqual([
      false,
      false,
      true,
      true,
    ]);
  });

  it("lists the LLM activities a provider's queue runs, and the export's timing columns", () => {
    expect([...LLM_ACTIVITY_NAMES].sort()).toEqual(['agentStep', 'decompose', 'draft', 'draftStatement', 'formalize', 'judge', 'repair']);
    expect(CSV_COLUMNS.filter((c) => c.startsWith('ms_'))).toEqual(STAGE_NAMES.map((s) => `ms_${s}`));
  });
});
