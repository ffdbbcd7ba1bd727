import type { ArchiveEntry, ArchiveKind } from '../conversation/types.js';
import type { EntryDigest } from './entry-digest.js';

/** Filters shared by search and list. Every value is data, never query syntax: adapters escape them. */
export interface ArchiveFilter {
  conversationId: string;
  depth?: number;
  kind?: ArchiveKind;
  /** Entries whose time span overlaps [from, to] (ISO times). */
  from?: string;
  to?: string;
}

export interface SearchQuery extends ArchiveFilter {
  query: string;
  /** Default 5, at most 50. */
  limit?: number;
  /**
   * The caller reads each hit's label, kind, parent and messages, nothing else: an adapter may return `content`,
   * `operationId`, `start` and `end` empty, `depth` and `count` 0, and `sourceIds` and `sessions` left out, to read
   * less (memory_read's candidate segments ask this; it reads the few entries it names in full).
   */
  messagesOnly?: boolean;
  /**
   * The caller shows each hit's line (kind, depth, label, start, end, count) and text, nothing else: an adapter may
   * return `operationId` empty, and `sourceIds`, `sessions`, `parentLabel` and `messages` left out, to read less
   * (memory_read's summaries ask this). With `messagesOnly` too, a hit keeps what either keeps.
   */
  textOnly?: boolean;
}

export interface SearchHit {
  entry: ArchiveEntry;
  /** Fused score, higher is better; comparable within one result list only. */
  score: number;
}

export interface ListOptions extends ArchiveFilter {
  /** Only entries no higher-depth batch covers yet (the frontier, for summaries). */
  unmarkedOnly?: boolean;
}

/** What `eraseConversation` removed, and what it rewrote to make the removal physical. */
export interface ArchiveErasure {
  /** Entries of the conversation deleted, of every kind (summaries, transcripts, tool outputs). */
  entries: number;
  /**
   * Rows of other conversations rewritten so that no data file keeps a deleted copy of the conversation (LanceDB: the
   * rows sharing its fragments, or every row when older deleted copies may lie anywhere). 0 in memory.
   */
  rowsRewritten: number;
}

export interface ArchiveMark {
  label: string;
  parentLabel: string | null;
}

/** How `Archive.write` may store its entries. */
export interface WriteOptions {
  /**
   * The caller found none of these labels stored while holding the conversation's lock, and writes them for the
   * first time (a compaction's own labels, chosen under its lock): an adapter may append them without looking them
   * up first. A caller wrong about it leaves two rows under one label, so no other caller may claim it. Default
   * false: every label is looked up.
   */
  labelsFree?: boolean;
}

/**
 * Archival memory, scoped by conversation (and by the namespace the adapter was opened with).
 * Time order of `list` results: by `start`, then `end`, then label.
 */
export interface Archive {
  /**
   * Upsert by label within one operation: writing a label again with the same `operationId` replaces the
   * row, never duplicates it. A row of another operation is never replaced: the write throws naming it.
   * With `labelsFree`, see `WriteOptions`.
   */
  write(entries: ArchiveEntry[], options?: WriteOptions): Promise<void>;
  /** The entries with these labels in this conversation, in the order asked (missing labels are left out). */
  read(conversationId: string, labels: string[]): Promise<ArchiveEntry[]>;
  /**
   * The stored entries with these labels as digests (`entry-digest.ts`), in the order asked, missing labels left out:
   * what a write's read-back compares, without returning the rows' texts. Optional capability; default (an adapter
   * without it): the read-back reads the entries and digests them itself.
   */
  readDigests?(conversationId: string, labels: string[]): Promise<EntryDigest[]>;
  /** Hybrid search (full text + vector, fused by reciprocal rank). */
  search(query: SearchQuery): Promise<SearchHit[]>;
  list(options: ListOptions): Promise<ArchiveEntry[]>;
  /**
   * How many entries `list` would return, without reading them (LanceDB counts them by its scalar indexes). Optional
   * capability; default (an adapter without it): callers list or search instead.
   */
  count?(options: ListOptions): Promise<number>;
  /** Record that `parentLabel` now covers these entries (they stay readable and searchable). */
  mark(conversationId: string, labels: string[], parentLabel: string | null): Promise<void>;
  /**
   * Several marks at once, each label under its own parent (`null` clears it): one commit where the store has
   * commits, so a compaction that supersedes many entries does not make a table version per entry.
   */
  markEach(conversationId: string, marks: readonly ArchiveMark[]): Promise<void>;
  delete(conversationId: string, labels: string[]): Promise<void>;
  /**
   * Remove every entry of the conversation, of every kind, so that the store keeps no copy of it: LanceDB also
   * rewrites the data files still holding deleted rows, brings every index (the full-text one too) up to date and
   * drops old table versions and their files. Idempotent: run again after a crash, it finishes the job. Optional
   * capability; default (an adapter without it): the erase lists the conversation's entries and `delete`s them by
   * label, with nothing more done to the store's files.
   */
  eraseConversation?(conversationId: string): Promise<ArchiveErasure>;
  close(): Promise<void>;
}
