// The configured results database, for entry points: PostgreSQL when DRIFTLINE_RESULTS_URL is
// set (workers on several machines share it), else SQLite at `<dataDir>/results.sqlite`.
import type { Config } from './config';
import { ResultsDb, resultsLocation } from '../engines/results/results-db';

export function openResults(config: Config): Promise<ResultsDb> {
  return ResultsDb.open(resultsLocation(config.dataDir, config.results.url));
}
