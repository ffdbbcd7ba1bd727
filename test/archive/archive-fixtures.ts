/**
 * Shared helpers of the memory suites: a temp folder per suite and ArchiveEntry builders.
 */
import { mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import type { Archive, SearchQuery } from '../../src/archive/archive.js';
import type { ArchiveEntry, ConversationMessage } from '../../src/conversation/types.js';

export async function tempFolder(prefix: string): Promise<{ dir: string; cleanup(): Promise<void> }> {
  const dir = await mkdtemp(path.join(os.tmpdir(), `memfold-${prefix}-`));
  return { dir, cleanup: () => rm(dir, { recursive: true, force: true }) };
}

/** A summary batch at `minute` minutes past a fixed hour, spanning one minute unless told. */
export function summary(conversationId: string, label: string, content: string, overrides: Partial<ArchiveEntry> = {}): ArchiveEntry {
  return {
    kind: 'summary',
    label,
    conversationId,
    depth: 0,
    start: '2024-05-01T10:00:00.000Z',
    end: '2024-05-01T10:01:00.000Z',
    count: 2,
    content,
    sourceIds: [`${label}-m1`, `${label}-m2`],
    operationId: 'op-1',
    ...overrides,
  };
}

export function minute(n: number): string {
  return new Date(Date.UTC(2024, 4, 1, 10, 0, 0) + n * 60_000).toISOString();
}

export function transcript(conversationId: string, label: string, messages: ConversationMessage[], overrides: Partial<ArchiveEntry> = {}): ArchiveEntry {
  return {
    kind: 'transcript',
    label,
    conversationId,
    depth: 0,
    start: messages[0]?.createdAt ?? minute(0),
    end: messages.at(-1)?.createdAt ?? minute(0),
    count: messages.length,
    content: messages.map((m) => `[${m.createdAt}] ${m.role}: ${m.content}`).join('\n'),
    sourceIds: messages.map((m) => m.id),
    operationId: 'op-1',
    messages,
    ...overrides,
  };
}

export function message(conversationId: string, seq: number, content: string, role: ConversationMessage['role'] = 'user'): ConversationMessage {
  return { id: `${conversationId}-m${seq}`, conversationId, seq, role, content, createdAt: minute(seq) };
}

/**
 * The archive with every search it is asked recorded in `searches`; with `full`, each is answered as a search of
 * whole entries (its `messagesOnly` / `textOnly` left out), to compare an answer with what the lean searches give.
 */
export function recording(archive: Archive, full = false): { archive: Archive; searches: SearchQuery[] } {
  const searches: SearchQuery[] = [];
  const search = (query: SearchQuery) => {
    searches.push(query);
    const { messagesOnly: _lean, textOnly: _text, ...whole } = query;
    return archive.search(full ? whole : query);
  };
  return { archive: { ...archive, search }, searches };
}
