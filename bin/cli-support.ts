// What every `driftline` subcommand shares: how it fails and how it reads configuration.
import { ConfigError, loadConfig, type Config, type LoadOptions } from '../infra/config';

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
