// What every `driftline` subcommand shares: how it fails and how it reads configuration.
import type { Client } from '@temporalio/client';
import { ConfigError, loadConfig, type Config, type LoadOptions } from '../infra/config';
import { providerStatusFile, readProviderStatuses } from '../engines/llm/provider-status-file';
import { servedProviders } from '../client/stack-providers';
import { readServedLibraries, servedLibrariesFile, type ServedLibraries } from '../client/stack-libraries';

/** Prints `driftline: <message>` and exits 1: the one way a command reports a problem. */
export function fail(message: string): never {
  process.stderr.write(`driftline: ${message}\n`);
  process.exit(1);
}

/** The configuration, or a clean exit naming the bad setting. */
export function configOrExit(options: LoadOptions = {}): Config {
  try {
    return loadConfig(options);
  } catch (err) {
    if (err instanceof ConfigError) fail(err.message);
    throw err;
  }
}

/** The LLM providers the running stack has among those recorded in its data directory and
 * `asked`: the service decides what it has, not this shell's environment (client/stack-providers.ts). */
export async function stackProviderNames(cfg: Config, client: Client, asked: Iterable<string>): Promise<string[]> {
  const recorded = Object.keys(readProviderStatuses(providerStatusFile(cfg.dataDir)));
  return servedProviders(client, [...recorded, ...asked]).catch((err: Error) =>
    fail(`could not ask Temporal which LLM providers the stack serves: ${err.message}`),
  );
}

/** The libraries the running stack serves, as its main worker recorded them in the data
 * directory: the service decides what it has, not this shell's DRIFTLINE_LIBRARIES. */
export function stackLibraries(cfg: Config): ServedLibraries {
  const served = readServedLibraries(cfg.dataDir);
  if (!served)
    fail(
      `the stack has not said which libraries it serves: ${servedLibrariesFile(cfg.dataDir)} is missing. ` +
        `Its main worker writes it as it starts (npm start, or driftline worker --queue main); this command must share its data directory (DRIFTLINE_DATA_DIR)`,
    );
  return served;
}
