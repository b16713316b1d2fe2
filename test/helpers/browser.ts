// A real browser for tests: Debian's chromium driven by playwright-core (no browser download).
// CI installs it (.ci/run); elsewhere the browser suites run when a chromium is found.
import { existsSync, mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { chromium, type Browser } from 'playwright-core';

const CANDIDATES = ['/usr/bin/chromium', '/usr/bin/chromium-browser', '/usr/bin/google-chrome'];

export function chromiumPath(): string | undefined {
  const configured = process.env.CHROMIUM_PATH;
  if (configured) return configured;
  return CANDIDATES.find((path) => existsSync(path));
}

/** Whether the browser suites run here: always in CI (where a missing chromium is a failure). */
export const browserAvailable = Boolean(chromiumPath()) || Boolean(process.env.CI);

export async function launchBrowser(): Promise<Browser> {
  const executablePath = chromiumPath();
  if (!executablePath) throw new Error('no chromium found: `apt-get install chromium`, or set CHROMIUM_PATH');
  // As root (CI) chromium needs --no-sandbox; /dev/shm is small in containers.
  return chromium.launch({ executablePath, args: ['--no-sandbox', '--disable-dev-shm-usage'] });
}

/** Where tests write screenshots: .driftline/screenshots/ in the project. */
export function screenshotPath(name: string): string {
  const dir = fileURLToPath(new URL('../../.driftline/screenshots/', import.meta.url));
  mkdirSync(dir, { recursive: true });
  return join(dir, name);
}
