/** The LanceDB archive's options, their defaults, and their checks before anything opens. */
import type { Embedder } from '../../embedding/embedder.js';
import { InvalidArgumentError } from '../../errors.js';
import { defaultFusionWeights } from './rrf.js';

export interface LanceArchiveOptions {
  /** Folder or object-store URI (`./.memfold/lancedb`, `s3://bucket/path`). */
  uri: string;
  /**
   * Embeds entry content on write and the query on search. Its `dimensions` fixes the size of a new table's vectors;
   * 0 means it learns the size from its first answer (the OpenAI adapter): an existing table then gives the size,
   * and a missing one is created on the first write (`lancedb-deferred-archive.ts`), so opening makes no embedding call.
   */
  embedder: Embedder;
  /** Scope of conversations sharing the table. Default `default`. */
  namespace?: string;
  /** Default `memfold_archive`. */
  tableName?: string;
  /**
   * Weights of the two rankings in reciprocal rank fusion (k = 60). Default: `{ fullText: 1, vector: 0 }` (full text
   * alone) when `embedder.id` starts with `hashing` (see rrf.ts for why), `{ fullText: 1, vector: 0.1 }` for any
   * other (semantic) embedder (measured, rrf.ts). A weight of 0 turns that ranking off; a ranking alone is not fused.
   */
  fusionWeights?: { fullText: number; vector: number };
  /** Run `optimize()` (compaction + incremental index update) once an index lags this many rows. Default 128. */
  optimizeAfterUnindexedRows?: number;
  /**
   * Milliseconds without a write (or mark) on this archive before index upkeep (`optimize()`) runs. Default 1000. Its
   * cost grows with the whole table, so it waits until a burst of writes (a compaction's) is over instead of running
   * between them, where the burst's next write would wait for it; under writes that never pause it runs at the latest
   * 10 delays after it was first due. 0 runs it right behind the write. `close()` runs one still pending.
   */
  upkeepDelayMs?: number;
  /**
   * Create the scalar indexes (namespace, conversation_id, depth, kind, key) beside the full-text one. Default true.
   * False creates only the full-text index (benchmarks compare the two); indexes that already exist are kept and maintained.
   */
  scalarIndexes?: boolean;
  /**
   * Seconds between checks for commits by other processes. Default 0: every read sees every committed write
   * (a `memory_read` server sees what a compacting process archived a moment ago). Larger is cheaper on object stores.
   */
  readConsistencySeconds?: number;
  /** Passed to LanceDB for object stores (credentials, region, endpoint). */
  storageOptions?: Record<string, string>;
  /** Retries of a write that lost a commit race. Default 4 (delays 25, 50, 100, 200 ms). */
  commitRetries?: number;
  /** Injected for tests. Default `setTimeout`. */
  sleep?: (ms: number) => Promise<void>;
  /** Told when index maintenance fails (the write it followed has succeeded; rows stay searchable). Default: ignored. */
  onWarning?: (message: string, error: unknown) => void;
  /**
   * Only read (`read-only-archive.ts`): opening creates no table (a missing one finds nothing until another process
   * creates it) and runs no index upkeep; every write, mark, delete or erase is refused. For a reader beside the
   * process that writes the archive. Default false.
   */
  readOnly?: boolean;
}

export const DEFAULT_LANCE_ARCHIVE_OPTIONS = Object.freeze({
  namespace: 'default',
  tableName: 'memfold_archive',
  optimizeAfterUnindexedRows: 128,
  upkeepDelayMs: 1000,
  scalarIndexes: true,
  readConsistencySeconds: 0,
  commitRetries: 4,
  commitRetryBaseDelayMs: 25,
  searchLimit: 5,
  maxSearchLimit: 50,
});

export type LanceSettings = typeof DEFAULT_LANCE_ARCHIVE_OPTIONS & Omit<LanceArchiveOptions, 'namespace' | 'tableName'>;

export interface CheckedLanceOptions {
  settings: LanceSettings;
  weights: { fullText: number; vector: number };
}

/** The options with their defaults, refused (`InvalidArgumentError` naming the option) when one is out of range. */
export function checkLanceOptions(options: LanceArchiveOptions): CheckedLanceOptions {
  const settings = { ...DEFAULT_LANCE_ARCHIVE_OPTIONS, ...definedOnly(options) } as LanceSettings;
  const { uri } = options;
  const { namespace } = settings;
  if (typeof uri !== 'string' || uri.length === 0) throw new InvalidArgumentError('uri', 'must be a non-empty string');
  if (typeof namespace !== 'string' || namespace.length === 0) throw new InvalidArgumentError('namespace', 'must be a non-empty string');
  if (!Number.isInteger(options.embedder?.dimensions) || options.embedder.dimensions < 0) {
    throw new InvalidArgumentError('embedder.dimensions', 'must be an integer >= 1, or 0 when the embedder learns it from its first answer');
  }
  for (const [name, min] of [
    ['optimizeAfterUnindexedRows', 1],
    ['readConsistencySeconds', 0],
    ['commitRetries', 0],
    ['upkeepDelayMs', 0],
  ] as const) {
    if (!(Number.isInteger(settings[name]) && settings[name] >= min)) throw new InvalidArgumentError(name, `must be an integer >= ${min}`);
  }
  if (typeof settings.scalarIndexes !== 'boolean') throw new InvalidArgumentError('scalarIndexes', 'must be a boolean');
  const weights = options.fusionWeights ?? defaultFusionWeights(options.embedder.id);
  for (const [name, weight] of Object.entries(weights)) {
    if (!(Number.isFinite(weight) && weight >= 0)) throw new InvalidArgumentError(`fusionWeights.${name}`, 'must be a finite number >= 0');
  }
  return { settings, weights };
}

function definedOnly<T extends object>(value: T): Partial<T> {
  return Object.fromEntries(Object.entries(value).filter(([, v]) => v !== undefined)) as Partial<T>;
}
