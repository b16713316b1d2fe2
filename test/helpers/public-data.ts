// The public data directory test/global-setup.ts pulled, for the tests that read the real data
// sets. When it could not be pulled, this throws the reason: such a test fails, it never skips.
import { inject } from 'vitest';

export function publicData(): string {
  const provided = inject('publicData');
  if ('error' in provided) throw new Error(`this test needs the public data, which test/global-setup.ts could not pull: ${provided.error}`);
  return provided.dir;
}
