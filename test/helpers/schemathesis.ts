// Where Schemathesis is: DRIFTLINE_SCHEMATHESIS (the `st` program), else the virtual environment
// `npm run setup:schemathesis` makes in .tools/schemathesis (infra/setup-schemathesis.mjs).
import { existsSync } from 'node:fs';
import { fileURLToPath } from 'node:url';

export const SCHEMATHESIS_VENV_ST = fileURLToPath(new URL('../../.tools/schemathesis/bin/st', import.meta.url));

export function findSchemathesis(): string | undefined {
  const fromEnv = process.env.DRIFTLINE_SCHEMATHESIS;
  if (fromEnv) {
    if (!existsSync(fromEnv))
      throw new Error(`DRIFTLINE_SCHEMATHESIS=${fromEnv} does not exist; unset it or point it at Schemathesis's \`st\``);
    return fromEnv;
  }
  return existsSync(SCHEMATHESIS_VENV_ST) ? SCHEMATHESIS_VENV_ST : undefined;
}
