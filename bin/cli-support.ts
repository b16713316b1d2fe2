// What every `driftline` subcommand shares: how it fails and how it reads configuration.
import type { Client } from '@temporalio/client';
import { ConfigError, loadConfig, type Config, type LoadOptions } from '../infra/config';
import { providerStatusFile, readProviderStatuses } from '../engines/llm/provider-status-file';
import { servedProviders } from '../client/stack-providers';

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
