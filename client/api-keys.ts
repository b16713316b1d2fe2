// API keys as configuration holds them: only each key's SHA-256 (`name:hex`), never the key, so
// a leaked config or log line gives nothing away. `driftline keys new` makes a key and its entry.
import { createHash, randomBytes } from 'node:crypto';

export interface ApiKey {
  name: string;
  /** SHA-256 of the key, hex. */
  sha256: string;
}

export function hashKey(key: string): string {
  return createHash('sha256').update(key, 'utf8').digest('hex');
}

/** A fresh key (`dl_` + 32 random bytes, base64url) and the configuration entry that admits it. */
export function newApiKey(name: string): { key: string; entry: string } {
  const key = `dl_${randomBytes(32).toString('base64url')}`;
  return { key, entry: `${name}:${hashKey(key)}` };
}

const ENTRY = /^([A-Za-z0-9_.-]{1,64}):([0-9a-f]{64})$/;

/** `name:sha256hex` entries, comma separated (DRIFTLINE_API_KEYS). Throws naming a bad entry. */
export function parseApiKeys(value: string): ApiKey[] {
  return value
    .split(',')
    .map((s) => s.trim())
    .filter(Boolean)
    .map((entry) => {
      const match = ENTRY.exec(entry);
      if (!match) {
        const shown = entry.includes(':') ? `${entry.slice(0, entry.indexOf(':'))}:…` : '(an entry without ":")';
        throw new Error(
          `${shown} is not of the form name:<64 hex digits of the key's SHA-256>; \`npx driftline keys new --name NAME\` prints one`,
        );
      }
      return { name: match[1]!, sha256: match[2]! };
    });
}
