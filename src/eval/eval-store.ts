/**
 * One fresh embedded store for a whole evaluation, shared by a memfold per context window: a new
 * PGlite folder costs seconds and one process owns it, so windows differ by conversation id, not store.
 * Tokens are plain chars/4 (reproducible). The summarizer and embedder follow the environment, so a
 * configured model can be evaluated; the store variables are ignored, so no real database is touched.
 */
import type { CompactionSettings } from '../compaction/compaction-settings.js';
import { createMemfold, type Memfold } from '../memfold.js';
import { createTokenCounter } from '../tokens/create-token-counter.js';

/** Variables that would point the evaluation at an existing store. */
const STORE_VARIABLES = ['MEMFOLD_DATABASE_URL', 'DATABASE_URL', 'LANCEDB_URI', 'MEMFOLD_HOME', 'MEMFOLD_NAMESPACE'];

export interface EvalStoreOptions {
  /** Folder of the fresh store (PGlite under `pg/`, LanceDB under `lancedb/`). */
  home: string;
  namespace?: string;
  /** Environment for the model settings; default `process.env`. */
  env?: Record<string, string | undefined>;
  /** Compaction settings beside each window (`contextWindow` is the window's). */
  compaction?: Partial<CompactionSettings>;
}

export interface EvalStore {
  /** A memfold compacting for this window, on the shared store. */
  memfoldFor(window: number): Promise<Memfold>;
  close(): Promise<void>;
}

export function withoutStoreVariables(env: Record<string, string | undefined>): Record<string, string | undefined> {
  return Object.fromEntries(Object.entries(env).filter(([name]) => !STORE_VARIABLES.includes(name)));
}

export function openEvalStore(options: EvalStoreOptions): EvalStore {
  const env = withoutStoreVariables(options.env ?? process.env);
  const config = { home: options.home, ...(options.namespace ? { namespace: options.namespace } : {}) };
  const tokens = createTokenCounter({ mode: 'chars4' });
  const byWindow = new Map<number, Promise<Memfold>>();
  let owner: Promise<Memfold> | undefined;
  return {
    memfoldFor(window) {
      let memfold = byWindow.get(window);
      if (!memfold) {
        if (!owner) {
          memfold = createMemfold({ env, config, tokens, compaction: { ...options.compaction, contextWindow: window } });
          owner = memfold;
        } else {
          memfold = owner.then(({ persistence, archive }) =>
            createMemfold({ env, config, tokens, persistence, archive, reconcileOnOpen: false, compaction: { ...options.compaction, contextWindow: window } }),
          );
        }
        byWindow.set(window, memfold);
      }
      return memfold;
    },
    async close() {
      const settled = await Promise.allSettled(byWindow.values());
      const open = settled.flatMap((s) => (s.status === 'fulfilled' ? [s.value] : []));
      const ownerMemfold = owner ? await owner.catch(() => undefined) : undefined;
      // The owner closes the shared stores, so it goes last.
      for (const memfold of open) if (memfold !== ownerMemfold) await memfold.close();
      await ownerMemfold?.close();
    },
  };
}
