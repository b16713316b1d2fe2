// A Temporal client whose first `describe` of a workflow answers "running", as it would have a
// moment earlier; everything else (signals, cancels, later describes) goes to the real server.
// It stands for the race in which a workflow ends between an API route's status check and its
// request (a sweep resumed twice), which Schemathesis met once and a test cannot time.
import type { Client } from '@temporalio/client';

export function staleFirstDescribe(client: Client): Client {
  let stale = true;
  const workflow = new Proxy(client.workflow, {
    get(target, prop) {
      if (prop === 'getHandle') {
        return (...args: Parameters<Client['workflow']['getHandle']>) => {
          const handle = target.getHandle(...args);
          const describe = async () => {
            const real = await handle.describe();
            if (!stale) return real;
            stale = false;
            return { ...real, status: { ...real.status, code: 1, name: 'RUNNING' as const } };
          };
          return { ...handle, describe };
        };
      }
      const value = Reflect.get(target, prop, target) as unknown;
      return typeof value === 'function' ? value.bind(target) : value;
    },
  });
  return new Proxy(client, { get: (target, prop) => (prop === 'workflow' ? workflow : Reflect.get(target, prop, target)) });
}
