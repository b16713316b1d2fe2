// Identical requests in flight at the same time are made once: the second caller waits for the
// first caller's answer instead of paying for its own (within one process; across processes the
// reply cache catches the rest once the first reply is stored).
export class SingleFlight<T> {
  private readonly inFlight = new Map<string, Promise<T>>();

  /** Runs `work` for `key` unless a call for the same key is running; then shares its result. */
  run(key: string, work: () => Promise<T>): { result: Promise<T>; shared: boolean } {
    const running = this.inFlight.get(key);
    if (running) return { result: running, shared: true };
    const result = work().finally(() => this.inFlight.delete(key));
    this.inFlight.set(key, result);
    return { result, shared: false };
  }

  get size(): number {
    return this.inFlight.size;
  }
}
