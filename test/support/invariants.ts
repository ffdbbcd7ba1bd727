/**
 * The invariants every compaction must keep, checked against the real stores:
 * every message ever appended is live or archived verbatim, covered by exactly one depth-0 batch
 * when archived; a live tool result whose output was cleared (tier 2) keeps its row (id, seq, call id) and is
 * verbatim in exactly one tool output entry no segment supersedes, while an archived one's tool output entry is
 * superseded by the segment holding it; labels unique and parseable; headers match fields; depth-0 batches in time
 * order; the clip-archive shows the first and last N frontier batches; no tool call is split from its result;
 * no operation is pending and every archived row belongs to a committed operation; a row is marked compacted
 * (overlay mode) exactly when the committed overlay operation that archived it names it, and its kept row is the
 * archived copy (but for a cleared output's text, archived as appended); a delete-mode compaction's messages have
 * no row.
 */
import { expect } from 'vitest';
import type { ArchiveEntry, ConversationMessage } from '../../src/conversation/types.js';
import { clipArchiveLabels, selectClip } from '../../src/compaction/view/clip-archive.js';
import { parseHeader } from '../../src/compaction/format/headers.js';
import { parseLabel } from '../../src/compaction/format/labels.js';
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
  /**
   * `unpinned`: messages that were pinned while later messages were archived, then unpinned; the batch that archives
   * them spans time the batches before it cover, so the time order of depth-0 batches is checked without it.
   */
  options: { toolPairs?: boolean; unpinned?: ReadonlySet<string> } = {},
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
  const toolOutputs = entries.filter((e) => e.kind === 'tool_output');

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
  const segmentOf = new Map(transcripts.flatMap((t) => (t.messages ?? []).map((m) => [m.id, t.label] as const)));
  const outputsOf = new Map<string, ArchiveEntry[]>();
  for (const o of toolOutputs) {
    expect(o.messages?.length, `tool output ${o.label} holds one message`).toBe(1);
    const id = o.messages![0]!.id;
    outputsOf.set(id, [...(outputsOf.get(id) ?? []), o]);
  }
  for (const original of appended) {
    const live = liveById.get(original.id);
    const archived = archivedById.get(original.id);
    const outputs = outputsOf.get(original.id) ?? [];
    expect((live !== undefined) !== (archived !== undefined), `message ${original.id} (seq ${original.seq}) is ${live ? 'live and archived' : 'lost'}`).toBe(
      true,
    );
    if (archived) {
      expect(archived).toEqual(original);
      expect(depth0Cover.get(original.id), `depth-0 coverage of ${original.id}`).toBe(1);
      // A tool output cleared before the message was compacted is superseded by the segment that holds it.
      for (const o of outputs) expect(o.parentLabel, `tool output ${o.label} superseded`).toBe(segmentOf.get(original.id));
    } else {
      expect(depth0Cover.get(original.id) ?? 0).toBe(0);
      if (live!.clearedOutputLabel === undefined) {
        expect(live).toEqual(original);
        expect(
          outputs.map((o) => o.label),
          `tool outputs of uncleared ${original.id}`,
        ).toEqual([]);
      } else {
        // Cleared: the row keeps everything but its text, and its words are in exactly one unsuperseded tool output.
        const { content: _placeholder, clearedOutputLabel, ...kept } = live!;
        const { content: _original, ...rest } = original;
        expect(kept).toEqual(rest);
        expect(
          outputs.map((o) => o.label),
          `tool output of cleared ${original.id}`,
        ).toEqual([clearedOutputLabel]);
        expect(outputs[0]!.parentLabel).toBeUndefined();
        expect(outputs[0]!.messages![0]).toEqual(original);
        expect(live!.content).toContain(clearedOutputLabel);
      }
    }
  }
  for (const o of toolOutputs) expect(parseLabel(o.label), `label of ${o.label}`).toMatchObject({ kind: 'tool_output' });
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
    if (kept.clearedOutputLabel === undefined) expect(archivedById.get(row.id), `overlay row ${row.id} is archived as kept`).toEqual(kept);
    else {
      // A cleared output's row keeps its placeholder; the archive holds the text as appended.
      const { content: _placeholder, clearedOutputLabel: _label, ...rest } = kept;
      const { content: _original, ...archivedRest } = archivedById.get(row.id)!;
      expect(archivedRest, `overlay row ${row.id} is archived as kept`).toEqual(rest);
    }
  }
  expect(raw.filter((m) => m.compactedBy === undefined).map((m) => m.id)).toEqual(rows.map((m) => m.id));
  // A clearing (tier 2) changes rows in place: only compactions take them out.
  for (const operation of operations.filter((op) => op.status === 'committed' && op.kind !== 'clear_tool_outputs')) {
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
  const depth0 = batches.filter((b) => b.depth === 0 && !b.sourceIds.some((id) => options.unpinned?.has(id)));
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
