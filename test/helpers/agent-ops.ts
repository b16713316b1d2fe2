// The agent loop's ops over activities called directly in this process (no Temporal): the
// benchmark's baseline for the durable loop, and a harness for testing the loop alone.
import type { AgentOps } from '../../workflows/agent-loop';
import type { LeanActivities, MainActivities } from '../../common/activities';

export function inProcessAgentOps(
  main: Pick<MainActivities, 'agentStep' | 'retrieve' | 'draft'>,
  lean: Omit<LeanActivities, 'equivalence'>,
  library: string,
): AgentOps {
  return {
    step: (input) => main.agentStep(input),
    screen: (code) => lean.screenStatement({ code }),
    compile: (code) => lean.compile({ code }),
    inspectName: (name) => lean.inspectName({ name }),
    resolveName: (token, namespaceHints) => lean.resolveName({ token, library, namespaceHints, topK: 5 }),
    searchPremises: async (query) =>
      (await main.retrieve({ library, statement: query, subqueries: [], mode: 'monolithic', topK: 8, exclude: [], gold: [] })).premises,
    draft: (statement) => main.draft({ statement }),
    now: () => Date.now(),
    async within(ms, fn) {
      let timer: NodeJS.Timeout | undefined;
      const timeout = new Promise<'timeout'>((resolve) => {
        timer = setTimeout(() => resolve('timeout'), ms);
      });
      try {
        return await Promise.race([fn().then((value) => ({ value })), timeout]);
      } finally {
        clearTimeout(timer);
      }
    },
    isFatal: () => false,
  };
}
