/** What every Kysely store operation needs besides the handle: the store's namespace, clock and size limit. */
export interface StoreContext {
  namespace: string;
  clock: () => Date;
  /** UTF-8 bytes one appended message may take (validated by the store). */
  maxMessageBytes: number;
}
