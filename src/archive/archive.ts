import type { ArchiveEntry, ArchiveKind } from '../conversation/types.js';

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

export interface ArchiveMark {
  label: string;
  parentLabel: string | null;
}

/**
 * Archival memory, scoped by conversation (and by the namespace the adapter was opened with).
 * Time order of `list` results: by `start`, then `end`, then label.
 */
export interface Archive {
  /**
   * Upsert by label within one operation: writing a label again with the same `operationId` replaces the
   * row, never duplicates it. A row of another operation is never replaced: the write throws naming it.
   */
  write(entries: ArchiveEntry[]): Promise<void>;
  /** The entries with these labels in this conversation, in the order asked (missing labels are left out). */
  read(conversationId: string, labels: string[]): Promise<ArchiveEntry[]>;
  /** Hybrid search (full text + vector, fused by reciprocal rank). */
  search(query: SearchQuery): Promise<SearchHit[]>;
  list(options: ListOptions): Promise<ArchiveEntry[]>;
  /** Record that `parentLabel` now covers these entries (they stay readable and searchable). */
  mark(conversationId: string, labels: string[], parentLabel: string | null): Promise<void>;
  /**
   * Several marks at once, each label under its own parent (`null` clears it): one commit where the store has
   * commits, so a compaction that supersedes many entries does not make a table version per entry.
   */
  markEach(conversationId: string, marks: readonly ArchiveMark[]): Promise<void>;
  delete(conversationId: string, labels: string[]): Promise<void>;
  close(): Promise<void>;
}
