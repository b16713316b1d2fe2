// A Lean runner that answers every check with `ok` and records what it was sent, for tests
// that must show a text never reached Lean.
import type { CompileResult } from '../../common/lean-types';
import type { CheckOptions, LeanRunner } from '../../engines/lean/runner-contract';

export class CountingRunner implements LeanRunner {
  calls: string[] = [];
  async check(code: string, _opts?: CheckOptions): Promise<CompileResult> {
    this.calls.push(code);
    return { status: 'ok', messages: [], durationMs: 0 };
  }
  async close(): Promise<void> {}
  ready(): boolean {
    return true;
  }
}
