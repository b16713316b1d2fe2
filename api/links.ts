// Links every run response carries: itself, its event stream, its page in the Temporal Web UI.
import { temporalUiLink } from '../client/runs';

export interface RunLinker {
  self(id: string): string;
  run(id: string): { self: string; events: string; temporalUi: string };
}

export function runLinker(temporalUiUrl: string, namespace: string): RunLinker {
  const self = (id: string) => `/v1/formalizations/${encodeURIComponent(id)}`;
  return {
    self,
    run: (id) => ({ self: self(id), events: `${self(id)}/events`, temporalUi: temporalUiLink(temporalUiUrl, namespace, id) }),
  };
}
