/**
 * Vectors only where a search will use them: with the vector ranking off (the hashing embedder's default) nothing
 * is embedded, on write or search, and rows are stored without a vector (null; zero vectors on a table made when
 * the column was not nullable). A later archive with the vector ranking on finds those rows by full text alone,
 * and embeds what it writes.
 */
import { connect } from '@lancedb/lancedb';
import { Field, Schema } from 'apache-arrow';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { openLanceArchive } from '../../src/archive/lancedb/lancedb-archive.js';
import { archiveSchema, COLUMN, toRow } from '../../src/archive/lancedb/lancedb-schema.js';
import type { Embedder } from '../../src/embedding/embedder.js';
import { createHashingEmbedder } from '../../src/embedding/hashing-embedder.js';
import { summary, tempFolder } from './archive-fixtures.js';

const TABLE = 'memfold_archive';
const VECTORS_ON = { fullText: 1, vector: 1 };
const VECTORS_ONLY = { fullText: 0, vector: 1 };

/** The hashing embedder, counting the texts it is asked to embed. */
function countingEmbedder(): Embedder & { texts: number } {
  const inner = createHashingEmbedder();
  const counting = {
    id: inner.id,
    dimensions: inner.dimensions,
    maxEmbeddingsPerCall: inner.maxEmbeddingsPerCall,
    texts: 0,
    embed: (texts: string[]) => {
      counting.texts += texts.length;
      return inner.embed(texts);
    },
  };
  return counting;
}

/** Each row's label and whether it holds a vector other than zeros, read from the table itself. */
async function storedVectors(dir: string): Promise<Record<string, 'none' | 'zeros' | 'vector'>> {
  const db = await connect(dir);
  const table = await db.openTable(TABLE);
  try {
    const rows = await table.query().select([COLUMN.label, COLUMN.vector]).toArray();
    return Object.fromEntries(
      rows.map((row) => {
        const vector = row[COLUMN.vector] as { toArray(): Float32Array } | null;
        const kind = vector === null ? 'none' : vector.toArray().some((value) => value !== 0) ? 'vector' : 'zeros';
        return [String(row[COLUMN.label]), kind];
      }),
    );
  } finally {
    table.close();
    db.close();
  }
}

const rows = [
  summary('c', 'plain-1', 'the invoice for the garden furniture was paid on Tuesday'),
  summary('c', 'plain-2', 'the doctor moved the appointment to Friday morning'),
];
const later = summary('c', 'with-vector', 'the invoice for the kitchen tiles is still open');
const labels = (hits: { entry: { label: string } }[]) => hits.map((hit) => hit.entry.label);

describe('lancedb archive: vectors only where a search uses them', () => {
  let folder: Awaited<ReturnType<typeof tempFolder>>;
  beforeEach(async () => {
    folder = await tempFolder('lance-vectors');
  });
  afterEach(() => folder.cleanup());

  it('embeds nothing with the vector ranking off, stores null vectors, and a later archive with vectors on finds those rows by full text only', async () => {
    const embedder = countingEmbedder();
    const lexical = await openLanceArchive({ uri: folder.dir, embedder });
    await lexical.write(rows);
    await lexical.write([{ ...rows[0]!, content: `${rows[0]!.content}, in cash` }]); // a merge (the label is stored)
    expect(labels(await lexical.search({ conversationId: 'c', query: 'invoice garden' }))).toEqual(['plain-1']);
    expect(embedder.texts).toBe(0); // neither the rows nor the query
    await lexical.close();
    expect(await storedVectors(folder.dir)).toEqual({ 'plain-1': 'none', 'plain-2': 'none' });

    const semantic = await openLanceArchive({ uri: folder.dir, embedder, fusionWeights: VECTORS_ON });
    try {
      await semantic.write([later]);
      expect(embedder.texts).toBe(1);
      expect(await storedVectors(folder.dir)).toEqual({ 'plain-1': 'none', 'plain-2': 'none', 'with-vector': 'vector' });
      // The rows without vectors still answer through full text, fused as usual.
      expect(labels(await semantic.search({ conversationId: 'c', query: 'invoice', limit: 5 })).sort()).toEqual(['plain-1', 'with-vector']);
      // The vector ranking alone never returns a row without a vector, however near it would be.
      const other = await openLanceArchive({ uri: folder.dir, embedder, fusionWeights: VECTORS_ONLY });
      try {
        expect(labels(await other.search({ conversationId: 'c', query: 'invoice garden furniture paid', limit: 5 }))).toEqual(['with-vector']);
      } finally {
        await other.close();
      }
    } finally {
      await semantic.close();
    }
  });

  it('writes zero vectors to a table whose vector column is not nullable (made by an earlier version), appends and merges alike', async () => {
    const embedder = createHashingEmbedder();
    const db = await connect(folder.dir);
    const current = archiveSchema(embedder);
    const schema = new Schema(
      current.fields.map((field) => (field.name === COLUMN.vector ? new Field(field.name, field.type, false) : field)),
      current.metadata,
    );
    const table = await db.createEmptyTable(TABLE, schema);
    const [vector] = await embedder.embed([later.content]);
    await table.add([toRow('default', later, { startMs: Date.parse(later.start), endMs: Date.parse(later.end) }, vector!)]);
    table.close();
    db.close();

    const lexical = await openLanceArchive({ uri: folder.dir, embedder });
    await lexical.write(rows);
    await lexical.write([{ ...rows[1]!, content: `${rows[1]!.content} at nine` }]);
    expect((await lexical.read('c', ['plain-2']))[0]!.content).toContain('at nine');
    await lexical.close();
    expect(await storedVectors(folder.dir)).toEqual({ 'plain-1': 'zeros', 'plain-2': 'zeros', 'with-vector': 'vector' });

    // A zero vector has no direction: the vector ranking skips it as it skips a null one.
    const vectorsOnly = await openLanceArchive({ uri: folder.dir, embedder, fusionWeights: VECTORS_ONLY });
    try {
      expect(labels(await vectorsOnly.search({ conversationId: 'c', query: 'invoice garden furniture paid', limit: 5 }))).toEqual(['with-vector']);
    } finally {
      await vectorsOnly.close();
    }
  });
});
