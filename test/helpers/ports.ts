// Ports for servers that a test has another process bind later (the API, the Temporal dev server
// and its UI under `npm start`). Asking the kernel for a free one (listen on 0, close, hand it on)
// leaves a gap in which the kernel may hand the same port to anyone else: an outgoing connection,
// another test's listen(0), the Temporal CLI's own random ports. So they are drawn from below the
// kernel's ephemeral range, which it never hands out by itself, and checked free by binding them.
import { readFileSync } from 'node:fs';
import { createServer } from 'node:net';

const LOW = 20_000;
/** The first port the kernel hands out by itself (Linux; elsewhere its usual default is higher). */
function ephemeralLow(): number {
  try {
    return Number(readFileSync('/proc/sys/net/ipv4/ip_local_port_range', 'utf8').trim().split(/\s+/)[0]) || 32_768;
  } catch {
    return 32_768;
  }
}
const HIGH = Math.max(LOW + 1000, Math.min(ephemeralLow(), 32_768));
const given = new Set<number>();

function canListen(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const server = createServer();
    server.once('error', () => resolve(false));
    server.listen(port, '127.0.0.1', () => server.close(() => resolve(true)));
  });
}

/** A loopback port free now, not given before by this process, outside the ephemeral range. */
export async function freePort(): Promise<number> {
  for (let i = 0; i < 500; i++) {
    const port = LOW + Math.floor(Math.random() * (HIGH - LOW));
    if (given.has(port)) continue;
    if (await canListen(port)) {
      given.add(port);
      return port;
    }
  }
  throw new Error(`no free loopback port found between ${LOW} and ${HIGH}`);
}
