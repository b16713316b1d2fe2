// Bounds how many run starts the API has in flight with Temporal at once. A burst of POSTs
// otherwise becomes a burst of concurrent StartWorkflowExecution calls, and a dev server (SQLite,
// one write at a time) lets them queue until their deadlines pass and its own writes fail.
// Beyond the queue, callers get 503 with Retry-After instead of a slow timeout.
export class StartLimiter {
  private active = 0;
  private readonly waiting: (() => void)[] = [];

  constructor(
    private readonly maxInFlight: number,
    private readonly maxWaiting: number,
  ) {}

  /** Runs `fn` when a slot is free; null when the queue is full (answer 503). */
  async run<T>(fn: () => Promise<T>): Promise<{ value: T } | null> {
    if (this.active >= this.maxInFlight) {
      if (this.waiting.length >= this.maxWaiting) return null;
      await new Promise<void>((resolve) => this.waiting.push(resolve));
    } else {
      this.active++;
    }
    try {
      return { value: await fn() };
    } finally {
      const next = this.waiting.shift();
      if (next)
        next(); // the slot passes straight to the next caller
      else this.active--;
    }
  }
}
