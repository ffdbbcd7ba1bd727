import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Embedder } from '../../src/embedding/embedder.js';
import { createHashingEmbedder } from '../../src/embedding/hashing-embedder.js';
import { MemfoldError } from '../../src/errors.js';
import { openLanceArchive } from '../../src/archive/lancedb/lancedb-archive.js';
import type { Archive } from '../../src/archive/archive.js';
import { minute, summary, tempFolder } from './archive-fixtures.js';

const embedder = createHashingEmbedder();
/** Both rankings on (the hashing embedder alone ranks by full text): the hybrid path a semantic embedder takes, with full text leading. */
const HYBRID = { fullText: 1, vector: 0.01 };
const TOPICS = ['budget', 'travel', 'garden', 'kitchen', 'meeting', 'server', 'holiday', 'invoice', 'school', 'doctor'];
const VERBS = ['discussed', 'planned', 'postponed', 'reviewed', 'approved', 'questioned', 'summarized', 'compared'];
const FILLER = ['the weekly plan', 'next steps', 'open questions', 'a long list of items', 'several options', 'the old notes'];

/** ~200 ordinary rows: similar vocabulary everywhere, so only the planted facts are unique. */
function background(conversationId: string, count: number) {
  return Array.from({ length: count }, (_, i) =>
    summary(
      conversationId,
      `bg-${i}`,
      `[${minute(i)}] user ${VERBS[i % VERBS.length]} the ${TOPICS[i % TOPICS.length]} and ${FILLER[i % FILLER.length]}; assistant ${VERBS[(i * 3) % VERBS.length]} the ${TOPICS[(i * 7) % TOPICS.length]} ${i % 13} times.`,
      {
        start: minute(i),
        end: minute(i + 1),
        depth: i % 3 === 0 ? 1 : 0,
      },
    ),
  );
}

const labels = (hits: { entry: { label: string } }[]) => hits.map((hit) => hit.entry.label);

describe('lancedb archive: hybrid search', () => {
  let folder: Awaited<ReturnType<typeof tempFolder>>;
  let archive: Archive;

  beforeAll(async () => {
    folder = await tempFolder('search');
    archive = await openLanceArchive({ uri: folder.dir, embedder, fusionWeights: HYBRID });
    const rows = background('main', 200);
    rows[37] = summary('main', 'name', '[2024-05-01] user: Ms Wrzesniewska from procurement reviewed the budget and the weekly plan.', {
      start: minute(37),
      end: minute(38),
    });
    rows[88] = summary('main', 'number', '[2024-05-01] assistant: the invoice total was 48213 after the discount on the travel plan.', {
      start: minute(88),
      end: minute(89),
    });
    rows[150] = summary('main', 'path', '[2024-05-01] tool: the failing test lives in src/billing/invoice-renderer.ts next to the server code.', {
      start: minute(150),
      end: minute(151),
    });
    await archive.write(rows);
    // The same facts in another conversation must never come back.
    await archive.write([summary('neighbour', 'leak', 'Wrzesniewska 48213 src/billing/invoice-renderer.ts budget travel garden')]);
  });
  afterAll(async () => {
    await archive.close();
    await folder.cleanup();
  });

  it('finds an exact name, a number and a file path planted among 200 rows, first', async () => {
    expect(labels(await archive.search({ conversationId: 'main', query: 'Wrzesniewska' }))[0]).toBe('name');
    expect(labels(await archive.search({ conversationId: 'main', query: 'what was 48213 about?' }))[0]).toBe('number');
    expect(labels(await archive.search({ conversationId: 'main', query: 'src/billing/invoice-renderer.ts' }))[0]).toBe('path');
    expect(labels(await archive.search({ conversationId: 'main', query: 'invoice-renderer' }))[0]).toBe('path');
  });

  it('returns full entries with scores, best first, default 5, at most 50', async () => {
    const hits = await archive.search({ conversationId: 'main', query: 'budget' });
    expect(hits).toHaveLength(5);
    expect(hits[0]?.entry).toMatchObject({ kind: 'summary', conversationId: 'main', sourceIds: expect.any(Array) });
    const scores = hits.map((hit) => hit.score);
    expect([...scores].sort((a, b) => b - a)).toEqual(scores);
    expect(await archive.search({ conversationId: 'main', query: 'budget', limit: 500 })).toHaveLength(50);
  });

  it('applies depth, kind and time filters to both rankings', async () => {
    const deep = await archive.search({ conversationId: 'main', query: 'budget travel garden', depth: 1, limit: 50 });
    expect(deep.length).toBeGreaterThan(0);
    expect(deep.every((hit) => hit.entry.depth === 1)).toBe(true);
    const windowed = await archive.search({ conversationId: 'main', query: 'Wrzesniewska budget', from: minute(100), to: minute(120), limit: 50 });
    expect(labels(windowed)).not.toContain('name');
    expect(windowed.every((hit) => hit.entry.end >= minute(100) && hit.entry.start <= minute(120))).toBe(true);
    expect(await archive.search({ conversationId: 'main', query: 'budget', kind: 'transcript' })).toEqual([]);
  });

  it('answers a query that shares no word with any row from vector neighbours', async () => {
    const hits = await archive.search({ conversationId: 'main', query: 'xylophone quasar' });
    expect(hits).toHaveLength(5);
    expect(hits.every((hit) => hit.entry.conversationId === 'main')).toBe(true);
  });

  it('never throws on query syntax and never leaks another conversation', async () => {
    const hostile = [
      '"',
      "'",
      'a:b',
      'content:Wrzesniewska',
      '*',
      'Wrzesniewska*',
      'AND OR NOT',
      'NOT budget',
      '(budget',
      'budget)',
      '\\',
      'C:\\Users\\x',
      "'; DROP TABLE x; --",
      '~2',
      '+budget -travel',
      '^3',
      '{}[]',
      '\u0000',
      '   ',
      '',
    ];
    for (const query of hostile) {
      const hits = await archive.search({ conversationId: 'main', query });
      expect(hits.every((hit) => hit.entry.conversationId === 'main')).toBe(true);
    }
    // Only punctuation: no words for full text, and the hashing embedder gives the zero vector.
    expect(await archive.search({ conversationId: 'main', query: '?!... --- ***' })).toEqual([]);
    expect(labels(await archive.search({ conversationId: 'main', query: '"Wrzesniewska' }))[0]).toBe('name');
  });
});

describe('lancedb archive: fusion weights with the hashing embedder', () => {
  // A table of its own: BM25 statistics (document frequencies) are table-wide, so other suites' rows would change them.
  let folder: Awaited<ReturnType<typeof tempFolder>>;
  let archive: Archive;
  beforeAll(async () => {
    folder = await tempFolder('fusion');
    archive = await openLanceArchive({ uri: folder.dir, embedder });
  });
  afterAll(async () => {
    await archive.close();
    await folder.cleanup();
  });

  it('lets full text lead with the hashing embedder: a rare name in a long text beats look-alike rows', async () => {
    // 60 look-alike rows share the query's common words; the target mentions the rare name once in a long text.
    const lookAlikes = Array.from({ length: 60 }, (_, i) =>
      summary(
        'lead',
        `alike-${i}`,
        `user reviewed the ${TOPICS[i % 10]} and the weekly plan; assistant summarized the ${TOPICS[(i * 3) % 10]} plan ${i % 7} times`,
      ),
    );
    const target = summary(
      'lead',
      'target',
      'Procurement call notes. Attendees talked through warehouse inventory, chairs, desks, lamps, cabling, monitors, keyboards, ' +
        'shipping dates and the supplier contract. Wrzesniewska reviewed the budget at the end. Then the lease renewal, the parking ' +
        'permits, the cleaning rota and the fire drill schedule were covered in detail.',
    );
    // Written with vectors (the default stores none with the hashing embedder), so the weights below show what they would add.
    const writer = await openLanceArchive({ uri: folder.dir, embedder, fusionWeights: HYBRID });
    await writer.write([...lookAlikes, target]);
    await writer.close();
    const query = { conversationId: 'lead', query: 'who reviewed the budget and the weekly plan, Wrzesniewska?', limit: 10 };
    const rankOf = async (fusionWeights?: { fullText: number; vector: number }) => {
      const other = await openLanceArchive({ uri: folder.dir, embedder, ...(fusionWeights ? { fusionWeights } : {}) });
      try {
        const rank = labels(await other.search(query)).indexOf('target');
        return rank === -1 ? Number.POSITIVE_INFINITY : rank;
      } finally {
        await other.close();
      }
    };
    expect(labels(await archive.search(query))[0]).toBe('target'); // defaults: { fullText: 1, vector: 0 }
    expect(await rankOf({ fullText: 1, vector: 0 })).toBe(0); // BM25 alone ranks it first
    expect(await rankOf({ fullText: 0, vector: 1 })).toBe(Number.POSITIVE_INFINITY); // hashing vectors alone miss it in the top 10
    // A vector weight of 0.3 already lets vector agreement push the answer down: why full text ranks alone.
    expect(await rankOf({ fullText: 1, vector: 0.3 })).toBeGreaterThan(2);
  });
});

describe('lancedb archive: hostile conversation ids', () => {
  const hostileIds = [
    "x' OR 1=1 --",
    "x' OR conversation_id != '",
    'back\\slash',
    "back\\' OR '1'='1",
    '%',
    '_',
    'line\nbreak',
    'tab\tand "double"',
    "it's",
    'ünï😀',
    "') OR ('a'='a",
  ];
  let folder: Awaited<ReturnType<typeof tempFolder>>;
  let archive: Archive;

  beforeAll(async () => {
    folder = await tempFolder('hostile');
    archive = await openLanceArchive({ uri: folder.dir, embedder });
    await archive.write([summary('victim', 'secret', 'secret pelican plans'), summary('x', 'secret-x', 'secret pelican of x')]);
    await archive.write(hostileIds.map((id, i) => summary(id, `own-${i}`, `own pelican row ${i}`, { start: minute(i), end: minute(i) })));
  });
  afterAll(async () => {
    await archive.close();
    await folder.cleanup();
  });

  it('search, list and read return only the rows of the id given, whatever it contains', async () => {
    for (const [i, id] of hostileIds.entries()) {
      const hits = await archive.search({ conversationId: id, query: 'secret pelican', limit: 50 });
      expect(labels(hits)).toEqual([`own-${i}`]);
      expect((await archive.list({ conversationId: id })).map((entry) => entry.label)).toEqual([`own-${i}`]);
      expect((await archive.read(id, ['secret', `own-${i}`, "secret' OR '1'='1"])).map((entry) => entry.label)).toEqual([`own-${i}`]);
    }
  });

  it('marks and deletes only within the hostile id', async () => {
    await archive.mark("x' OR 1=1 --", ['secret', 'secret-x', 'own-0'], "p' OR '1'='1");
    expect((await archive.read("x' OR 1=1 --", ['own-0']))[0]?.parentLabel).toBe("p' OR '1'='1");
    expect((await archive.read('victim', ['secret']))[0]).not.toHaveProperty('parentLabel');
    await archive.delete("x' OR 1=1 --", ['secret', 'secret-x', 'own-0']);
    await archive.delete('%', ['%']);
    expect((await archive.list({ conversationId: 'victim' })).map((entry) => entry.label)).toEqual(['secret']);
    expect((await archive.list({ conversationId: 'x' })).map((entry) => entry.label)).toEqual(['secret-x']);
    expect(await archive.list({ conversationId: "x' OR 1=1 --" })).toEqual([]);
  });
});

describe('lancedb archive: a semantic embedder', () => {
  /** A toy "semantic" embedder: synonyms share a dimension, so meaning is found without shared words. */
  const groups = [
    ['car', 'automobile', 'vehicle'],
    ['dog', 'puppy', 'hound'],
    ['rain', 'storm', 'weather'],
  ];
  const semantic: Embedder = {
    id: 'toy-semantic',
    dimensions: 4,
    maxEmbeddingsPerCall: 2,
    async embed(texts) {
      return texts.map((text) => {
        const vector = new Float32Array(4);
        for (const word of text.toLowerCase().match(/\p{L}+/gu) ?? []) {
          const group = groups.findIndex((members) => members.includes(word));
          vector[group === -1 ? 3 : group]! += 1;
        }
        const norm = Math.hypot(...vector);
        return norm === 0 ? vector : vector.map((value) => value / norm);
      });
    },
  };
  let folder: Awaited<ReturnType<typeof tempFolder>>;
  let archive: Archive;

  beforeAll(async () => {
    folder = await tempFolder('semantic');
    archive = await openLanceArchive({ uri: folder.dir, embedder: semantic });
    await archive.write([
      summary('s', 'car', 'we bought a new car on monday'),
      summary('s', 'dog', 'the puppy chewed a shoe'),
      summary('s', 'rain', 'the storm flooded the cellar'),
    ]);
  });
  afterAll(async () => {
    await archive.close();
    await folder.cleanup();
  });

  it('finds by meaning when no word is shared (vector ranking), batching by maxEmbeddingsPerCall', async () => {
    expect(labels(await archive.search({ conversationId: 's', query: 'automobile' }))[0]).toBe('car');
    expect(labels(await archive.search({ conversationId: 's', query: 'hound' }))[0]).toBe('dog');
    expect(labels(await archive.search({ conversationId: 's', query: 'weather' }))[0]).toBe('rain');
    // Full text still answers exact words.
    expect(labels(await archive.search({ conversationId: 's', query: 'cellar' }))[0]).toBe('rain');
  });
});

describe('lancedb archive: a failing embedder', () => {
  let folder: Awaited<ReturnType<typeof tempFolder>>;
  beforeAll(async () => {
    folder = await tempFolder('failing-embedder');
  });
  afterAll(async () => folder.cleanup());

  it('fails a write with the embedder error, but search falls back to full text and says so', async () => {
    const hashing = createHashingEmbedder();
    let down = false;
    const flaky: Embedder = {
      ...hashing,
      async embed(texts, options) {
        if (down) throw new MemfoldError('embedding_error', 'embedding endpoint unreachable', { retryable: true });
        return hashing.embed(texts, options);
      },
    };
    const warnings: string[] = [];
    const archive = await openLanceArchive({ uri: folder.dir, embedder: flaky, fusionWeights: HYBRID, onWarning: (text) => warnings.push(text) });
    try {
      await archive.write([summary('f', 'kept', 'the flamingo count was 12'), summary('f', 'other', 'nothing to see')]);
      down = true;
      await expect(archive.write([summary('f', 'lost', 'never stored')])).rejects.toMatchObject({ code: 'embedding_error' });
      expect(labels(await archive.search({ conversationId: 'f', query: 'flamingo' }))).toEqual(['kept']);
      expect(warnings.some((text) => /searching by full text only/.test(text))).toBe(true);
      expect((await archive.list({ conversationId: 'f' })).map((entry) => entry.label)).toEqual(['kept', 'other']);
    } finally {
      await archive.close();
    }
  });

  it('rejects options that make no sense, naming them', async () => {
    await expect(openLanceArchive({ uri: folder.dir, embedder, optimizeAfterUnindexedRows: 0 })).rejects.toMatchObject({ field: 'optimizeAfterUnindexedRows' });
    await expect(openLanceArchive({ uri: folder.dir, embedder, fusionWeights: { fullText: -1, vector: 1 } })).rejects.toMatchObject({
      field: 'fusionWeights.fullText',
    });
    await expect(openLanceArchive({ uri: '', embedder })).rejects.toMatchObject({ field: 'uri' });
  });
});
