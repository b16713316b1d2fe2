// The stage registry (common/stages.ts): every list of stages and activities derives from it.
import { describe, expect, it } from 'vitest';
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import {
  ACTIVITIES,
  CURRENT_ACTIVITY_NAMES,
  isBookkeeping,
  isStageTool,
  LLM_ACTIVITY_NAMES,
  RETIRED_ACTIVITIES,
  STAGE_LABELS,
  STAGE_NAMES,
  stageOfActivity,
} from '../../common/stages';
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

  it('is the one home of retired activity names: each names the patch that retired it, which the workflows still decide on', () => {
    expect(RETIRED_ACTIVITIES).toEqual([{ activity: 'draftStatement', patch: 'formalize-repair-activities' }]);
    expect(CURRENT_ACTIVITY_NAMES).not.toContain('draftStatement');
    expect([...CURRENT_ACTIVITY_NAMES, ...RETIRED_ACTIVITIES.map((r) => r.activity)].sort()).toEqual(Object.keys(ACTIVITIES).sort());
    const dir = fileURLToPath(new URL('../../workflows', import.meta.url));
    const code = readdirSync(dir)
      .filter((f) => f.endsWith('.ts'))
      .map((f) => readFileSync(join(dir, f), 'utf8'))
      .join('\n');
    for (const { patch } of RETIRED_ACTIVITIES) expect(code).toContain(`patched('${patch}')`);
  });

  it('names no retired activity anywhere in the product code but the registry, the activity interface and the old branch', () => {
    const root = fileURLToPath(new URL('../..', import.meta.url));
    const allowed = new Set(['common/stages.ts', 'common/activities.ts', 'activities/index.ts', 'workflows/formalize.ts']);
    const found: string[] = [];
    const walk = (dir: string): void => {
      for (const entry of readdirSync(join(root, dir), { withFileTypes: true })) {
        const path = `${dir}/${entry.name}`;
        if (entry.isDirectory()) {
          if (entry.name !== 'node_modules' && entry.name !== 'dist') walk(path);
        } else if (/\.tsx?$/.test(entry.name) && !allowed.has(path)) {
          const text = readFileSync(join(root, path), 'utf8');
          for (const { activity } of RETIRED_ACTIVITIES) if (text.includes(activity)) found.push(`${path}: ${activity}`);
        }
      }
    };
    for (const dir of ['activities', 'api', 'bin', 'client', 'common', 'engines', 'infra', 'mcp', 'web', 'workflows']) walk(dir);
    expect(found).toEqual([]);
  });
});
