/** Counting semaphore; a waiter gives up when its signal aborts. */
export class Semaphore {
  private readonly waiters: Array<{ grant: () => void }> = [];
  constructor(private free: number) {
    if (!Number.isInteger(free) || free < 1) throw new RangeError(`Semaphore size must be a positive integer, got ${free}`);
  }

  acquire(signal: AbortSignal): Promise<void> {
    if (signal.aborted) return Promise.reject(signal.reason);
    if (this.free > 0) {
      this.free--;
      return Promise.resolve();
    }
    return new Promise((resolve, reject) => {
      const entry = {
        grant: () => {
          signal.removeEventListener("abort", cancel);
          resolve();
        },
      };
      const cancel = () => {
        const i = this.waiters.indexOf(entry);
        if (i >= 0) this.waiters.splice(i, 1);
        reject(signal.reason);
      };
      signal.addEventListener("abort", cancel, { once: true });
      this.waiters.push(entry);
    });
  }

  release(): void {
    const next = this.waiters.shift();
    if (next) next.grant();
    else this.free++;
  }

  async with<T>(signal: AbortSignal, fn: () => Promise<T>): Promise<T> {
    await this.acquire(signal);
    try {
      return await fn();
    } finally {
      this.release();
    }
  }
}
