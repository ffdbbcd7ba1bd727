/**
 * The invariants every compaction must keep, checked against the real stores:
 * every message ever appended is live or archived verbatim, covered by exactly one depth-0 batch
 * when archived; labels unique and parseable; headers match fields; depth-0 batches in time order;
 * the clip-archive shows the first and last N frontier batches; no tool call is split from its result;
 * no operation is pending and every archived row belongs to a committed operation; a row is marked compacted
 * (overlay mode) exactly when the committed overlay operation that archived it names it, and its kept row is the
 * archived copy; a delete-mode operation's messages have no row.
 */
import { expect } from 'vitest';
import type { ArchiveEntry, ConversationMessage } from '../../src/conversation/types.js';
import { clipArchiveLabels, selectClip } from '../../src/compaction/clip-archive.js';
import { parseHeader } from '../../src/compaction/headers.js';
import { parseLabel } from '../../src/compaction/labels.js';
import type { Memfold } from '../../src/memfold.js';

export interface InvariantReport {
  live: number;
  archived: number;
  /** Archived messages whose rows overlay compactions kept (marked). */
  overlaid: number;
  batches: number;
  maxDepth: number;
}

function toolPairsTogether(messages: readonly ConversationMessage[], where: string): void {
  const calls = new Set(messages.flatMap((m) => (m.toolCalls ?? []).map((c) => c.id)));
  const results = new Set(messages.filter((m) => m.role === 'tool' && m.toolCallId).map((m) => m.toolCallId!));
  for (const id of results) expect(calls.has(id), `${where}: tool result ${id} without its call`).toBe(true);
  for (const id of calls) expect(results.has(id), `${where}: tool call ${id} without its result`).toBe(true);
}

export async function checkInvariants(
  memfold: Memfold,
  conversationId: string,
  appended: readonly ConversationMessage[],
  options: { toolPairs?: boolean } = {},
): Promise<InvariantReport> {
  const rows = await memfold.persistence.loadHistory(conversationId);
  const live = rows.filter((m) => m.kind !== 'clip_archive');
  const entries = await memfold.archive.list({ conversationId });

  // No operation is left half-done, and every archived row belongs to a committed operation.
  const operations = await memfold.persistence.listOperations(conversationId);
  expect(
    operations.filter((op) => op.status === 'planned' || op.status === 'archived'),
    'pending operations',
  ).toEqual([]);
  const committed = new Set(operations.filter((op) => op.status === 'committed').map((op) => op.id));
  for (const e of entries) expect(committed.has(e.operationId), `${e.label} belongs to uncommitted operation ${e.operationId}`).toBe(true);
  const transcripts = entries.filter((e) => e.kind === 'transcript');
  const batches = entries.filter((e) => e.kind === 'summary');

  // Labels unique; batch labels and headers parse back to the batch's fields.
  const labels = entries.map((e) => e.label);
  expect(new Set(labels).size, 'labels are unique').toBe(labels.length);
  for (const b of batches) {
    expect(parseHeader(b.content), `header of ${b.label}`).toEqual({ depth: b.depth, start: b.start, end: b.end, count: b.count });
    expect(parseLabel(b.label), `label of ${b.label}`).toMatchObject({ kind: 'summary', depth: b.depth, time: b.end.slice(0, 16) });
    expect(b.count).toBe(b.sourceIds.length);
  }

  // Every appended message: live, or archived verbatim in exactly one transcript and one depth-0 batch.
  const liveById = new Map(live.map((m) => [m.id, m]));
  const archivedById = new Map<string, ConversationMessage>();
  for (const t of transcripts) {
    for (const m of t.messages ?? []) {
      expect(archivedById.has(m.id), `message ${m.id} archived twice`).toBe(false);
      archivedById.set(m.id, m);
    }
  }
  const depth0Cover = new Map<string, number>();
  for (const b of batches.filter((x) => x.depth === 0)) for (const id of b.sourceIds) depth0Cover.set(id, (depth0Cover.get(id) ?? 0) + 1);
  for (const original of appended) {
    const isLive = liveById.has(original.id);
    const archived = archivedById.get(original.id);
    expect(isLive !== (archived !== undefined), `message ${original.id} (seq ${original.seq}) is ${isLive ? 'live and archived' : 'lost'}`).toBe(true);
    if (archived) {
      expect(archived).toEqual(original);
      expect(depth0Cover.get(original.id), `depth-0 coverage of ${original.id}`).toBe(1);
    } else {
      expect(depth0Cover.get(original.id) ?? 0).toBe(0);
    }
  }
  expect(live.length + archivedById.size).toBe(appended.length);

  // Overlay rows: marked exactly by the committed overlay operation naming them, and each the archived copy.
  const raw = await memfold.persistence.loadHistory(conversationId, { includeCompacted: true });
  const markedBy = new Map(raw.filter((m) => m.compactedBy !== undefined).map((m) => [m.id, m]));
  const operationById = new Map(operations.map((op) => [op.id, op]));
  for (const row of markedBy.values()) {
    const operation = operationById.get(row.compactedBy!);
    expect(operation, `operation ${row.compactedBy} that marked ${row.id}`).toMatchObject({ status: 'committed', mode: 'overlay' });
    expect(operation!.messageIds, `operation ${operation!.id} names ${row.id}`).toContain(row.id);
    const { compactedBy: _, ...kept } = row;
    expect(archivedById.get(row.id), `overlay row ${row.id} is archived as kept`).toEqual(kept);
  }
  expect(raw.filter((m) => m.compactedBy === undefined).map((m) => m.id)).toEqual(rows.map((m) => m.id));
  for (const operation of operations.filter((op) => op.status === 'committed')) {
    for (const id of operation.messageIds) {
      if (operation.mode === 'overlay') expect(markedBy.get(id)?.compactedBy, `${id} marked by its overlay operation ${operation.id}`).toBe(operation.id);
      else
        expect(
          raw.some((m) => m.id === id),
          `${id} deleted by its operation ${operation.id}`,
        ).toBe(false);
    }
  }

  // Depth-0 batches in time order: sorted by start, each starts at or after the previous one ends.
  const depth0 = batches.filter((b) => b.depth === 0);
  for (let i = 1; i < depth0.length; i++) expect(depth0[i]!.start >= depth0[i - 1]!.end, `order of ${depth0[i]!.label}`).toBe(true);

  // Parents exist, one depth up; the frontier is what no parent covers.
  const byLabel = new Map<string, ArchiveEntry>(entries.map((e) => [e.label, e]));
  for (const b of batches) {
    if (!b.parentLabel) continue;
    const parent = byLabel.get(b.parentLabel);
    expect(parent?.depth, `parent of ${b.label}`).toBe(b.depth + 1);
    expect(parent!.sourceIds).toContain(b.label);
  }
  const frontier = batches.filter((b) => !b.parentLabel);

  // The clip-archive shows exactly the first and last N frontier batches.
  const clip = rows.find((m) => m.kind === 'clip_archive');
  if (batches.length > 0) {
    expect(clip, 'clip-archive row').toBeDefined();
    expect(clip!.content.startsWith('[Context Summary')).toBe(true);
    const { clipFirst, clipLast } = memfold.compactor.settings;
    expect(clipArchiveLabels(clip!.content)).toEqual(selectClip(frontier, clipFirst, clipLast).shown.map((b) => b.label));
  }

  if (options.toolPairs) {
    toolPairsTogether(live, 'live history');
    for (const t of transcripts) toolPairsTogether(t.messages ?? [], `transcript ${t.label}`);
  }
  return {
    live: live.length,
    archived: archivedById.size,
    overlaid: markedBy.size,
    batches: batches.length,
    maxDepth: Math.max(0, ...batches.map((b) => b.depth)),
  };
}
