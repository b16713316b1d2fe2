// OpenAPI links (3.x "links" on a response): from the response that creates a resource to the
// operations that use its id. @fastify/swagger has no route-level field for them, so they are
// added to the generated document here, by operationId.
type Responses = Record<string, { links?: Record<string, unknown> }>;
export interface OpenApiDocument {
  paths?: Record<string, Record<string, { operationId?: string; responses?: Responses }>>;
}

/** For each operation that creates something: its link name → target operation, fed the new id. */
const LINKS: Record<string, Record<string, string>> = {
  startFormalization: { read: 'getFormalization', cancel: 'cancelFormalization', events: 'getFormalizationEvents' },
  startChecks: { read: 'getChecks', events: 'getChecksEvents' },
  startSweep: { read: 'getSweep', report: 'getSweepReport', pause: 'pauseSweep', resume: 'resumeSweep', cancel: 'cancelSweep' },
};

export function addOperationLinks<T extends OpenApiDocument>(doc: T): T {
  const known = new Set(Object.values(doc.paths ?? {}).flatMap((ops) => Object.values(ops).map((op) => op.operationId)));
  for (const ops of Object.values(doc.paths ?? {})) {
    for (const op of Object.values(ops)) {
      const links = op.operationId ? LINKS[op.operationId] : undefined;
      if (!links) continue;
      for (const [status, response] of Object.entries(op.responses ?? {})) {
        if (!status.startsWith('2')) continue;
        response.links = Object.fromEntries(
          Object.entries(links)
            .filter(([, target]) => known.has(target))
            .map(([name, target]) => [name, { operationId: target, parameters: { id: '$response.body#/id' } }]),
        );
      }
    }
  }
  return doc;
}
