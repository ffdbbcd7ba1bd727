/** The in-process half of `withConversationLock`, shared by every PersistenceProvider adapter. Pure. */

/** A mutex per key, which knows its holder. Release hands the lock straight to the next waiter, in arrival order. */
export function createKeyedMutex() {
  const held = new Map<string, { holder: string; waiters: Array<{ holder: string; grant: () => void }> }>();
  return {
    tryAcquire(key: string, holder = 'another caller'): boolean {
      if (held.has(key)) return false;
      held.set(key, { holder, waiters: [] });
      return true;
    },
    /** Resolves true once the lock is this caller's, or false when `signal` aborts first (the caller then holds nothing). */
    acquire(key: string, options: { holder?: string; signal?: AbortSignal } = {}): Promise<boolean> {
      const holder = options.holder ?? 'another caller';
      const entry = held.get(key);
      if (entry === undefined) {
        held.set(key, { holder, waiters: [] });
        return Promise.resolve(true);
      }
      const { signal } = options;
      if (signal?.aborted) return Promise.resolve(false);
      return new Promise<boolean>((resolve) => {
        const onAbort = () => {
          const at = entry.waiters.indexOf(waiter);
          if (at >= 0) entry.waiters.splice(at, 1);
          resolve(false);
        };
        const waiter = {
          holder,
          grant: () => {
            signal?.removeEventListener('abort', onAbort);
            resolve(true);
          },
        };
        entry.waiters.push(waiter);
        signal?.addEventListener('abort', onAbort, { once: true });
      });
    },
    /** What holds `key` now (the `holder` it acquired with), if anything. */
    holderOf(key: string): string | undefined {
      return held.get(key)?.holder;
    },
    release(key: string): void {
      const entry = held.get(key);
      const next = entry?.waiters.shift();
      if (entry === undefined || next === undefined) {
        held.delete(key);
        return;
      }
      entry.holder = next.holder;
      next.grant();
    },
  };
}
