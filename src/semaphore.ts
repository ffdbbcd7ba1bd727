/**
 * A counting semaphore with waiters served in arrival order and a wait that an `AbortSignal` ends. Hand-written:
 * p-queue runs tasks, and a holder here is not one task (the compactor holds a place across steps of its own).
 */

export type Semaphore = ReturnType<typeof createSemaphore>;

/** At most `size` holders at once; the others wait in arrival order. */
export function createSemaphore(size: number) {
  let free = size;
  const waiters: Array<() => void> = [];
  return {
    /** Resolves true once a place is this caller's, or false when `signal` aborts first (nothing is then held). */
    acquire(signal?: AbortSignal): Promise<boolean> {
      if (free > 0) {
        free--;
        return Promise.resolve(true);
      }
      if (signal?.aborted) return Promise.resolve(false);
      return new Promise<boolean>((resolve) => {
        const onAbort = () => {
          const at = waiters.indexOf(grant);
          if (at >= 0) waiters.splice(at, 1);
          resolve(false);
        };
        const grant = () => {
          signal?.removeEventListener('abort', onAbort);
          resolve(true);
        };
        waiters.push(grant);
        signal?.addEventListener('abort', onAbort, { once: true });
      });
    },
    release(): void {
      const next = waiters.shift();
      if (next) next();
      else free++;
    },
  };
}
