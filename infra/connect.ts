// Connections to Temporal from configuration, for entry points.
import { Client } from '@temporalio/client';
import { NativeConnection } from '@temporalio/worker';
import type { Config } from './config';
import { connectTemporal } from './temporal-connection';

export function temporalAddress(config: Config): string {
  return config.temporal.address ?? `127.0.0.1:${config.temporal.devServerPort}`;
}

export async function connectClient(config: Config): Promise<Client> {
  const address = temporalAddress(config);
  try {
    // Close-safe: a command or the API may close it while a call is being retried.
    const connection = await connectTemporal({ address, connectTimeout: 5000 });
    return new Client({ connection, namespace: config.temporal.namespace });
  } catch (err) {
    throw new Error(
      `Cannot reach Temporal at ${address} (${(err as Error).message}). Start the stack with \`npm start\`, or set TEMPORAL_ADDRESS.`,
    );
  }
}

export async function connectWorker(config: Config): Promise<NativeConnection> {
  const address = temporalAddress(config);
  try {
    return await NativeConnection.connect({ address });
  } catch (err) {
    throw new Error(
      `Cannot reach Temporal at ${address} (${(err as Error).message}). Start the stack with \`npm start\`, or set TEMPORAL_ADDRESS.`,
    );
  }
}
