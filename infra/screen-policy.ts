// What the screen lets through, from the configuration. Its own module (no clients, no
// workers), so `driftline screen` reads the same policy as the Lean worker without loading them.
import type { Config } from './config';
import { loadCommandKeywords } from '../engines/lean/command-keywords';
import { DEFAULT_SAFETY_POLICY, type SafetyPolicy } from '../engines/lean/statement-safety';

/** One policy for the Lean worker's gate, its activities, the API's checks and `driftline screen`. */
export function screenPolicyOf(config: Config): SafetyPolicy {
  return {
    ...DEFAULT_SAFETY_POLICY,
    allowedImports: config.lean.allowedImports,
    commandKeywords: loadCommandKeywords(config.lean.commandKeywordsFile),
  };
}
