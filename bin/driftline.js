#!/usr/bin/env node
// The `driftline` command. Runs the JavaScript that `npm run setup` compiled (dist/cli.js) while
// it is up to date with every source file that went into it; otherwise the TypeScript sources
// through tsx (slower to start, always current). `npm run build` compiles again.
import { readFileSync, statSync } from 'node:fs';

const root = new URL('../', import.meta.url);

function compiledIsCurrent() {
  try {
    const { builtAtMs, inputs } = JSON.parse(readFileSync(new URL('dist/build.json', root), 'utf8'));
    return inputs.every((file) => statSync(new URL(file, root)).mtimeMs < builtAtMs);
  } catch {
    return false; // not built, or a source file is gone
  }
}

if (compiledIsCurrent()) {
  await import('../dist/cli.js');
} else {
  const { register } = await import('tsx/esm/api');
  register();
  await import('./cli.ts');
}
