import { Command } from 'commander';
import { Value } from 'typebox/value';
import { describe, expect, it } from 'vitest';
import { addRunConfigOptions, runConfigFromOptions } from '../../bin/run-config-options';
import { resolveRunConfig } from '../../common/run-config';
import { DEFAULT_RUN_CONFIG, RunConfigPatchSchema, RunConfigSchema } from '../../common/run-config-schema';

function parse(args: string[]): Record<string, unknown> {
  const command = addRunConfigOptions(new Command().exitOverride().configureOutput({ writeErr: () => {} }));
  command.parse(args, { from: 'user' });
  return command.opts();
}

describe('the run configuration, defined once', () => {
  it('takes its defaults from the schema', () => {
    expect(DEFAULT_RUN_CONFIG).toEqual({
      decompose: true,
      retrieval: 'drift',
      topK: 5,
      illustrate: true,
      examples: 3,
      repairRounds: 3,
      judge: true,
      mode: 'pipeline',
      tools: ['write_file', 'run_lean', 'inspect_name', 'resolve_name', 'search_premises'],
      maxSteps: 24,
      tokenBudget: 400_000,
      wallClockSeconds: 1800,
      driftContext: false,
      cache: true,
    });
    expect(resolveRunConfig({ topK: 9 })).toEqual({ ...DEFAULT_RUN_CONFIG, topK: 9 });
    expect(Value.Check(RunConfigSchema, DEFAULT_RUN_CONFIG)).toBe(true);
  });

  it('gives the API a body schema of any subset of the fields, with their ranges and nothing else', () => {
    expect(Value.Check(RunConfigPatchSchema, {})).toBe(true);
    expect(Value.Check(RunConfigPatchSchema, { retrieval: 'monolithic', topK: 10 })).toBe(true);
    expect(Value.Check(RunConfigPatchSchema, { topK: 0 })).toBe(false);
    expect(Value.Check(RunConfigPatchSchema, { retrieval: 'bm25' })).toBe(false);
    expect(Value.Check(RunConfigPatchSchema, { colour: 'blue' })).toBe(false);
    expect(Value.Check(RunConfigPatchSchema, { mode: 'agent', tools: ['write_file', 'run_lean'], maxSteps: 6 })).toBe(true);
    expect(Value.Check(RunConfigPatchSchema, { tools: ['write_file', 'shell'] })).toBe(false);
    // Defaults are applied by resolveRunConfig, not filled in by the validator.
    expect(JSON.stringify(RunConfigPatchSchema)).not.toContain('"default"');
  });

  it('gives the CLI one option per field, named after it', () => {
    const command = addRunConfigOptions(new Command());
    const names = command.options.map((o) => o.attributeName());
    expect(names.sort()).toEqual(Object.keys(RunConfigSchema.properties).sort());
    expect(command.options.map((o) => o.long)).toEqual(
      expect.arrayContaining(['--top-k', '--repair-rounds', '--no-decompose', '--no-judge', '--retrieval']),
    );
  });

  it('turns parsed options into the configuration, checking ranges and choices', () => {
    expect(resolveRunConfig(runConfigFromOptions(parse(['--top-k', '7', '--no-judge', '-r', 'monolithic'])))).toEqual({
      ...DEFAULT_RUN_CONFIG,
      topK: 7,
      judge: false,
      retrieval: 'monolithic',
    });
    expect(runConfigFromOptions(parse(['-m', '0', '--no-illustrate']))).toMatchObject({ examples: 0, illustrate: false });
    expect(() => parse(['--top-k', '0'])).toThrow(/from 1 to 100/);
    expect(() => parse(['--repair-rounds', '2.5'])).toThrow(/whole number/);
    expect(() => parse(['--retrieval', 'bm25'])).toThrow(/drift/);
    expect(
      runConfigFromOptions(parse(['--mode', 'agent', '--tools', 'write_file,run_lean,write_file', '--max-steps', '6', '--drift-context'])),
    ).toMatchObject({
      mode: 'agent',
      tools: ['write_file', 'run_lean'],
      maxSteps: 6,
      driftContext: true,
    });
    expect(() => parse(['--tools', 'write_file,shell'])).toThrow(/unknown shell/);
    expect(() => parse(['--max-steps', '51'])).toThrow(/from 1 to 50/);
  });
});
