// Libraries: which are configured, their index versions and alias, and a premise search.
import type { FastifyPluginAsync } from 'fastify';
import { Type, type Static, type TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import type { LibraryCatalog } from '../../client/library-catalog';
import { HttpProblem, problemResponses } from '../problem';
import { LibraryListSchema, SearchResultSchema } from '../schemas';

export interface LibraryRoutesOptions {
  catalog: LibraryCatalog;
}

const NameParams = Type.Object({ name: Type.String({ minLength: 1, maxLength: 200 }) });
const SearchQuery = Type.Object(
  {
    q: Type.String({ minLength: 1, maxLength: 2000, pattern: '\\S', description: 'What to look for: words, Lean names or a formula' }),
    k: Type.Optional(Type.Integer({ minimum: 1, maximum: 100, default: 10 })),
  },
  { additionalProperties: false },
);

export const libraryRoutes: FastifyPluginAsync<LibraryRoutesOptions> = async (fastify, { catalog }) => {
  const app = fastify.withTypeProvider<TypeBoxTypeProvider>();

  app.get(
    '/v1/libraries',
    {
      schema: {
        operationId: 'listLibraries',
        summary: 'The configured libraries, their index versions and the version each alias names',
        tags: ['libraries'],
        response: { 200: LibraryListSchema, ...problemResponses(401, 429) },
      },
    },
    async () => ({ items: await catalog.list() }),
  );

  app.get(
    '/v1/libraries/:name/search',
    {
      schema: {
        operationId: 'searchLibrary',
        summary: "Search a library's premises for a person: names matching the query first, then the statements' words",
        tags: ['libraries'],
        params: NameParams,
        querystring: SearchQuery,
        response: { 200: SearchResultSchema, ...problemResponses(400, 401, 404, 409, 429) },
      },
    },
    async (request) => {
      const { name } = request.params as Static<typeof NameParams>;
      const { q, k } = request.query as Static<typeof SearchQuery>;
      if (!catalog.names().includes(name)) throw new HttpProblem(404, `unknown library "${name}"; known: ${catalog.names().join(', ')}`);
      const found = await catalog.search(name, q, k ?? 10);
      if (!found)
        throw new HttpProblem(
          409,
          `library "${name}" has no index yet; it is built at the first \`npm start\` or by \`driftline index build\``,
        );
      return { library: name, version: found.version, query: q, items: found.hits };
    },
  );
};
