import { vectorFromArray } from 'apache-arrow';
import { describe, expect, it } from 'vitest';
import { entriesTable } from '../../src/archive/lancedb/lancedb-entries-table.js';
import { archiveSchema, COLUMN, labelOfKey, rowKey, rowKeyPrefix } from '../../src/archive/lancedb/lancedb-schema.js';
import { summary } from './archive-fixtures.js';

describe('entriesTable', () => {
  const embedder = { id: 'hashing-4', dimensions: 4 };
  const entries = [
    summary('c', 'a', 'first', { sourceIds: ['m-1', 'm-2', 'ünïcode-☃-𝄞'], sessions: ['monday', 'tuesday, "late"'] }),
    summary('c', 'b', 'second', { sourceIds: ['m-3'] }),
    summary('c', 'c', 'third', { sourceIds: ['m-4', ''], sessions: [] }),
    summary('c', 'd', 'fourth', { sourceIds: ['m-5'], sessions: ['é'] }),
  ];
  const times = entries.map(() => ({ startMs: 0, endMs: 60_000 }));
  const vectors = entries.map(() => new Float32Array([1, 0, 0, 0]));
  const built = entriesTable(archiveSchema(embedder), embedder, 'ns', entries, times, vectors);

  it('builds the list-of-strings columns as Arrow itself would: items, empty lists and nulls', () => {
    const listType = (name: string) => archiveSchema(embedder).fields.find((field) => field.name === name)!.type;
    const expected = (name: string, values: Array<string[] | null>) => vectorFromArray(values, listType(name)).toJSON();
    const column = (name: string) => built.getChild(name)!.toJSON();
    const plain = (rows: ReturnType<typeof column>) => rows.map((row) => (row === null ? null : Array.from(row as Iterable<string>)));
    expect(plain(column(COLUMN.sourceIds))).toEqual(
      plain(
        expected(
          COLUMN.sourceIds,
          entries.map((e) => [...e.sourceIds]),
        ),
      ),
    );
    expect(plain(column(COLUMN.sessions))).toEqual(
      plain(
        expected(
          COLUMN.sessions,
          entries.map((e) => (e.sessions ? [...e.sessions] : null)),
        ),
      ),
    );
    expect(plain(column(COLUMN.sessions))).toEqual([['monday', 'tuesday, "late"'], null, [], ['é']]);
    expect(built.getChild(COLUMN.sessions)!.nullCount).toBe(1);
  });
});

describe('rowKeyPrefix', () => {
  it("starts every key of its namespace and conversation, and no other's, whatever the ids hold", () => {
    const ids = ['a', 'ab', 'a"', 'a\\', 'a,', '"a"', "' OR '1'='1", 'é', 'a"]'];
    for (const namespace of ids) {
      for (const conversationId of ids) {
        const prefix = rowKeyPrefix(namespace, conversationId);
        for (const label of ['l', '"', '', ']']) {
          expect(rowKey(namespace, conversationId, label).startsWith(prefix)).toBe(true);
          expect(labelOfKey(rowKey(namespace, conversationId, label))).toBe(label);
        }
        for (const otherNamespace of ids) {
          for (const otherConversation of ids) {
            if (otherNamespace === namespace && otherConversation === conversationId) continue;
            expect(rowKey(otherNamespace, otherConversation, 'l').startsWith(prefix), `${otherNamespace} ${otherConversation}`).toBe(false);
          }
        }
      }
    }
  });
});
