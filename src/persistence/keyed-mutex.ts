/** The in-process half of `withConversationLock`, shared by every PersistenceProvider adapter. Pure. */

/** A mutex per key. Release hands the lock straight to the next waiter, in arrival order. */
export function createKeyedMutex() {
  const held = new Map<string, Array<() => void>>();
  return {
    tryAcquire(key: string): boolean {
      if (held.has(key)) return false;
      held.set(key, []);
      return true;
    },
    async acquire(key: string): Promise<void> {
      const waiters = held.get(key);
      if (waiters === undefined) {
        held.set(key, []);
        return;
      }
      await new Promise<void>((resolve) => waiters.push(resolve));
    },
    release(key: string): void {
      const next = held.get(key)?.shift();
      if (next === undefined) held.delete(key);
      else next();
    },
  };
}
