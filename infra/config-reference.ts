// The configuration reference (docs/configuration.md), generated from the configuration schema:
// every variable a field declares (infra/config.ts, `setting(...)`), with its config path, type,
// default and description, then the variables read outside the schema. `npm run docs:config`
// writes the file; test/config-reference.test.ts fails when the checked-in file differs from
// what this prints, so the reference cannot go stale.
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { ConfigSchema, OTHER_ENV_VARIABLES } from './config';
import { envSettings, type EnvSetting } from './config-env';
import { PROJECT_ROOT } from './temporal-cli';

export const REFERENCE_PATH = join(PROJECT_ROOT, 'docs', 'configuration.md');

/** Section titles by the first part of a config path (others are titled by that part). */
const SECTIONS: Record<string, string> = {
  temporal: 'Temporal',
  api: 'HTTP API',
  dataDir: 'Data',
  publicDataDir: 'Data',
  results: 'Sweep results',
  libraries: 'Libraries',
  llm: 'LLM providers, roles and models',
  translator: "The translator (the agent's `draft` tool)",
  store: 'Index store',
  embeddings: 'Embeddings',
  lean: 'Lean',
};

const cell = (text: string) => text.replace(/\|/g, '\\|');
const code = (text: string) => (text.includes('`') ? `\`\` ${text} \`\`` : `\`${text}\``);

function defaultCell(s: Pick<EnvSetting, 'default' | 'unset'>): string {
  if (s.default !== undefined) return s.default === '' ? '(empty)' : code(s.default);
  return s.unset ?? 'unset';
}

export function configurationReference(): string {
  const settings = envSettings(ConfigSchema);
  const lines: string[] = [
    '# Configuration reference',
    '',
    '<!-- Generated from the configuration schema (infra/config.ts) by `npm run docs:config`; do not edit by hand.',
    '     test/config-reference.test.ts fails when this file differs from what the schema says. -->',
    '',
    'driftline reads its settings from environment variables, over an optional `driftline.config.json` in the',
    'project root (or the file named by `DRIFTLINE_CONFIG`), over the defaults below. In the file, a setting sits',
    'at its config path (`llm.timeoutMs` is `{"llm": {"timeoutMs": 60000}}`). A bad value stops the start with a',
    'message naming the variable and the path.',
    '',
    `${settings.length} variables set configuration fields; ${OTHER_ENV_VARIABLES.length} more are read outside the configuration (the last section).`,
  ];
  let section = '';
  for (const s of settings) {
    const part = s.path.split('.')[0]!;
    const title = SECTIONS[part] ?? part;
    if (title !== section) {
      section = title;
      lines.push('', `## ${title}`, '', '| variable | config path | type | default | description |', '| --- | --- | --- | --- | --- |');
    }
    lines.push(`| \`${s.env}\` | \`${s.path}\` | ${cell(s.type)} | ${cell(defaultCell(s))} | ${cell(s.description)} |`);
  }
  lines.push('', '## Read outside the configuration', '', '| variable | type | default | description |', '| --- | --- | --- | --- |');
  for (const v of OTHER_ENV_VARIABLES)
    lines.push(`| \`${v.env}\` | ${cell(v.type)} | ${cell(v.default ?? 'unset')} | ${cell(v.description)} |`);
  return lines.join('\n') + '\n';
}

// `npm run docs:config`: write the reference (`--check`: only say whether it is current).
if (import.meta.url === `file://${process.argv[1]}`) {
  const text = configurationReference();
  if (process.argv.includes('--check')) {
    let current = '';
    try {
      current = readFileSync(REFERENCE_PATH, 'utf8');
    } catch {
      // missing: stale
    }
    if (current !== text) {
      console.error(`${REFERENCE_PATH} is stale: run \`npm run docs:config\` and commit it.`);
      process.exit(1);
    }
    console.log(`${REFERENCE_PATH} is current.`);
  } else {
    writeFileSync(REFERENCE_PATH, text);
    console.log(`wrote ${REFERENCE_PATH}`);
  }
}
