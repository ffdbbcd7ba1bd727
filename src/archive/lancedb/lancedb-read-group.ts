/**
 * One query at a time per kind of read, the asks made meanwhile answered together by the next: the read-backs of
 * concurrent compactions, whose writes share a commit (`lancedb-write-group.ts`) and so resolve together, become one
 * query instead of one each (every query scans the fragments the indexes do not cover yet). A lone ask starts at once.
 */

interface Member<A, R> {
  ask: A;
  resolve(result: R): void;
  reject(error: unknown): void;
}

/** `run` answers a group's asks in order; a failure of the group fails each of its asks. */
export function readGroups<A, R>(run: (asks: readonly A[]) => Promise<R[]>): (ask: A) => Promise<R> {
  let waiting: Member<A, R>[] = [];
  let busy = false;
  const next = (): void => {
    if (busy || waiting.length === 0) return;
    const group = waiting;
    waiting = [];
    busy = true;
    // The next group starts before this one's asks are answered: it does not wait on what they do next.
    const done = () => {
      busy = false;
      next();
    };
    run(group.map((m) => m.ask)).then(
      (results) => {
        done();
        group.forEach((m, i) => m.resolve(results[i]!));
      },
      (error: unknown) => {
        done();
        for (const m of group) m.reject(error);
      },
    );
  };
  return (ask) =>
    new Promise<R>((resolve, reject) => {
      waiting.push({ ask, resolve, reject });
      next();
    });
}
