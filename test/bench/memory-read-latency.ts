/**
 * memory_read latency: p50 and p95 of `memory.search` (one conversation, limit 5), of LanceDB's own full-text search on the same
 * table (limit 5 and 20: the tool draws 20 candidate segments, 40 for a count or recommendation question), and of the memory_read
 * tool's default answer, on the real LanceDB archive with the hashing embedder (384 dims), over tables of 10k, 100k and 1M rows
 * (transcripts and summaries) spread over 10k conversations; hybrid, vector only and full text only (the default with this
 * embedder); with and without the scalar indexes. The queries are LoCoMo's questions as asked: the tool gets the question, the
 * searches get the words the tool searches for (`searchTerms`, stop words dropped). The full-text columns and the tool are timed on
 * the same queries, in turn, so their ratio is measured under the same load.
 *
 * `MEMFOLD_BENCH_READ_ROWS=1000000` (comma-separated) measures those table sizes alone, in place of the run's own.
 * `MEMFOLD_BENCH_READ_DIR=<folder>` keeps the table there (not removed after the run); a later run on the same folder
 * writes only the rows it lacks (each size still drops the indexes and builds them again on open), so a 1M-row table
 * is written once. Its queries then differ from a fresh run's (the rows no longer draw from the same random sequence).
 *
 * One table grows from size to size. Rows are appended to the table the archive created, then each size starts with
 * no index: opening the archive with `scalarIndexes: false` builds the full-text index (measured first), opening it
 * with the default adds the scalar indexes (measured second). Index build times are reported too.
 */
import { readdir, stat } from 'node:fs/promises';
import path from 'node:path';
import { connect, MatchQuery, type Table } from '@lancedb/lancedb';
import type { ArchiveEntry, ConversationMessage } from '../../src/conversation/types.js';
import { seeded } from '../../src/cli/demo/demo-conversation.js';
import { batchContent } from '../../src/compaction/format/headers.js';
import { baseLabel } from '../../src/compaction/format/labels.js';
import { renderTranscript } from '../../src/compaction/format/transcript-format.js';
import { createMemoryReadTool } from '../../src/tools/memory-read.js';
import { embedAll } from '../../src/embedding/embedder.js';
import { createHashingEmbedder } from '../../src/embedding/hashing-embedder.js';
import { loadLocomo } from '../../src/eval/datasets/locomo.js';
import { DEFAULT_LANCE_ARCHIVE_OPTIONS, openLanceArchive } from '../../src/archive/lancedb/lancedb-archive.js';
import { entriesTable } from '../../src/archive/lancedb/lancedb-entries-table.js';
import { archiveSchema, COLUMN, ENTRY_COLUMNS } from '../../src/archive/lancedb/lancedb-schema.js';
import { filterWhere } from '../../src/archive/lancedb/lancedb-filter.js';
import { questionIntent } from '../../src/archive/ranking/question-intent.js';
import { searchTerms } from '../../src/archive/ranking/search-terms.js';
import type { Archive } from '../../src/archive/archive.js';
import { fmt, now, percentile, sized, table, tempDir, type BenchOptions, type BenchResult } from './bench-kit.js';
import { LOCOMO_FILE } from '../support/shared-data.js';

const LOCOMO = LOCOMO_FILE;
const CONVERSATIONS = 10_000;
const WRITE_BATCH = 50_000;
/** Distinct summary bodies the rows draw from (a smoke run embeds fewer). */
const BODIES = 30_000;
const SMOKE_BODIES = 300;
const CELL_SECONDS = 20;
/** Fusion weights per column; `undefined` is the archive's default with the hashing embedder (full text alone). */
const MODES = {
  'hybrid (full text leading)': { fullText: 1, vector: 0.01 },
  'vector only': { fullText: 0, vector: 1 },
  'full text only (default)': undefined,
} as const;
/** Timed in turn on the same queries, on the default archive and the same table. */
const PAIRED = ['LanceDB full text, limit 5', 'LanceDB full text, limit 20', 'memory_read tool'] as const;
type Mode = keyof typeof MODES | (typeof PAIRED)[number];

interface Cell {
  rows: number;
  scalarIndexes: boolean;
  mode: Mode;
  queries: number;
  p50: number;
  p95: number;
  /** Tool cells: questions asking a count or a recommendation (40 candidate segments). */
  wide?: number;
}

/** Sentences of every LoCoMo turn (the material summaries are drawn from), and LoCoMo's questions (the queries). */
export async function locomoPools(): Promise<{ sentences: string[]; questions: string[] }> {
  const conversations = await loadLocomo(LOCOMO);
  return {
    sentences: conversations.flatMap((c) => c.messages.flatMap((m) => m.content.split(/(?<=[.!?])\s+/).filter((s) => s.length > 20))),
    questions: conversations.flatMap((c) => c.questions.map((q) => q.question)),
  };
}

/** One query: a random conversation, a LoCoMo question, and the words memory_read searches the archive for. */
interface Ask {
  conversationId: string;
  question: string;
  words: string;
}

function asker(questions: readonly string[], random: () => number): () => Ask {
  return () => {
    const question = questions[Math.floor(random() * questions.length)]!;
    const conversationId = `conv-${String(Math.floor(random() * CONVERSATIONS)).padStart(5, '0')}`;
    // What the tool's default strategy (`cleanQuery`) sends to the archive's search.
    return { conversationId, question, words: searchTerms(question, { stem: false }).join(' ') || question };
  };
}

/** An archive entry with its times and vector: what the adapter's `entriesTable` makes a row of. */
interface Row {
  entry: ArchiveEntry;
  times: { startMs: number; endMs: number };
  vector: Float32Array;
}

/**
 * Row `i` as the adapter would store it: conversation i mod 10k, its k-th batch, a body of LoCoMo sentences under a
 * batch header. Bodies come from a pool (each embedded once): the vector is the body's, the header left out.
 */
function row(i: number, bodies: readonly Body[], random: () => number): Row {
  const conversationId = `conv-${String(i % CONVERSATIONS).padStart(5, '0')}`;
  const startMs = Date.UTC(2023, 0, 1) + Math.floor(i / CONVERSATIONS) * 3_600_000;
  const start = new Date(startMs).toISOString();
  const end = new Date(startMs + 1_800_000).toISOString();
  const body = bodies[Math.floor(random() * bodies.length)]!;
  const times = { startMs, endMs: startMs + 1_800_000 };
  // Two rows in three are verbatim transcript segments (what memory_read's answers are made of), one a summary.
  if (i % 3 !== 0) {
    const lines = body.text.split(/(?<=[.!?])\s+/);
    const messages: ConversationMessage[] = lines.map((text, j) => ({
      id: `m-${i}-${j}`,
      conversationId,
      seq: j + 1,
      role: j % 2 === 0 ? 'user' : 'assistant',
      content: text,
      createdAt: new Date(startMs + j * 60_000).toISOString(),
      kind: 'message',
    }));
    const sourceIds = messages.map((m) => m.id);
    const segment: ArchiveEntry = {
      kind: 'transcript',
      label: baseLabel({ kind: 'transcript', depth: 0, time: start, sourceIds }),
      conversationId,
      depth: 0,
      start,
      end,
      count: messages.length,
      content: renderTranscript(messages),
      sourceIds,
      operationId: `op-${i}`,
      messages,
    };
    return { entry: segment, times, vector: body.vector };
  }
  const depth = random() < 0.1 ? 1 : 0;
  const count = depth === 0 ? 20 : 6;
  const sourceIds = Array.from({ length: count }, (_, j) => `m-${i}-${j}`);
  const entry: ArchiveEntry = {
    kind: 'summary',
    label: baseLabel({ kind: 'summary', depth, time: end, sourceIds }),
    conversationId,
    depth,
    start,
    end,
    count,
    content: batchContent({ depth, start, end, count }, body.text),
    sourceIds,
    operationId: `op-${i}`,
  };
  return { entry, times, vector: body.vector };
}

interface Body {
  text: string;
  vector: Float32Array;
}

/** Distinct summary bodies of 300+ characters, each a run of random LoCoMo sentences, with their vectors. */
export async function bodyPool(size: number, sentences: readonly string[], random: () => number): Promise<Body[]> {
  const texts = Array.from({ length: size }, () => {
    let text = '';
    while (text.length < 300) text += `${sentences[Math.floor(random() * sentences.length)]} `;
    return text.trim();
  });
  const vectors = await embedAll(createHashingEmbedder(), texts);
  return texts.map((text, i) => ({ text, vector: vectors[i]! }));
}

/**
 * Appends rows [from, to) straight to the table the archive created (the adapter's upsert joins on the key and
 * slows as the table grows), then compacts it with no index left: the archive builds them again when it opens.
 */
export async function fill(uri: string, from: number, to: number, bodies: readonly Body[], random: () => number): Promise<number> {
  const t0 = now();
  const embedder = createHashingEmbedder();
  await (await openLanceArchive({ uri, embedder })).close();
  const db = await connect(uri);
  const table = await db.openTable(DEFAULT_LANCE_ARCHIVE_OPTIONS.tableName);
  for (let i = from; i < to; i += WRITE_BATCH) {
    const rows = Array.from({ length: Math.min(WRITE_BATCH, to - i) }, (_, j) => row(i + j, bodies, random));
    // The adapter's own Arrow conversion (LanceDB converts plain objects slowly), so the rows are what it writes.
    const batch = entriesTable(
      archiveSchema(embedder),
      embedder,
      DEFAULT_LANCE_ARCHIVE_OPTIONS.namespace,
      rows.map((r) => r.entry),
      rows.map((r) => r.times),
      rows.map((r) => r.vector),
    );
    await table.add(batch);
  }
  for (const index of await table.listIndices()) await table.dropIndex(index.name);
  await table.optimize({ cleanupOlderThan: new Date() });
  table.close();
  db.close();
  return (now() - t0) / 1000;
}

/** Rows of the archive table at `uri` (0 when there is none yet). */
async function storedRows(uri: string): Promise<number> {
  const db = await connect(uri);
  try {
    if (!(await db.tableNames()).includes(DEFAULT_LANCE_ARCHIVE_OPTIONS.tableName)) return 0;
    const table = await db.openTable(DEFAULT_LANCE_ARCHIVE_OPTIONS.tableName);
    const rows = await table.countRows();
    table.close();
    return rows;
  } finally {
    db.close();
  }
}

/** Queries per cell, stopping early once a cell has run for CELL_SECONDS (the slow cells of the largest table). */
async function measure(memory: Archive, queries: number, ask: () => Ask): Promise<{ ms: number[] }> {
  const search = ({ conversationId, words }: Ask) => memory.search({ conversationId, query: words, limit: 5 });
  for (let i = 0; i < 5; i++) await search(ask()); // warm-up
  const ms: number[] = [];
  const started = now();
  while (ms.length < queries && now() - started < CELL_SECONDS * 1000) {
    const query = ask();
    const t0 = now();
    await search(query);
    ms.push(now() - t0);
  }
  return { ms };
}

/** LanceDB's full-text search of one conversation's transcript segments, as memory_read's main search asks it, with the entry's columns. */
function lanceFullText(table: Table, { conversationId, words }: Ask, limit: number) {
  return table
    .query()
    .where(filterWhere(DEFAULT_LANCE_ARCHIVE_OPTIONS.namespace, { conversationId, kind: 'transcript' }))
    .select([...ENTRY_COLUMNS, '_score'])
    .fullTextSearch(new MatchQuery(words, COLUMN.content))
    .limit(limit)
    .toArray();
}

/**
 * The archive's search (limit 5), LanceDB's own full-text search (limit 5 and 20) and the memory_read tool's default answer
 * (`createMemoryReadTool(archive, conversationId).execute({ query })`) on the same queries, each query timed by all four in turn,
 * the order rotating; stops early once the cell has run for CELL_SECONDS x 4.
 */
async function measurePaired(memory: Archive, table: Table, queries: number, ask: () => Ask): Promise<{ ms: Map<Mode, number[]>; wide: number }> {
  const runs: Array<[Mode, (query: Ask) => Promise<unknown>]> = [
    ['full text only (default)', ({ conversationId, words }) => memory.search({ conversationId, query: words, limit: 5 })],
    [PAIRED[0], (query) => lanceFullText(table, query, 5)],
    [PAIRED[1], (query) => lanceFullText(table, query, 20)],
    [PAIRED[2], ({ conversationId, question }) => createMemoryReadTool(memory, conversationId).execute({ query: question })],
  ];
  for (let i = 0; i < 5; i++) {
    const query = ask();
    for (const [, run] of runs) await run(query); // warm-up
  }
  const ms = new Map<Mode, number[]>(runs.map(([mode]) => [mode, []]));
  let asked = 0;
  let wide = 0;
  const started = now();
  while (asked < queries && now() - started < CELL_SECONDS * 4 * 1000) {
    const query = ask();
    const intent = questionIntent(query.question);
    if (intent.aggregate || intent.preference) wide++;
    for (let k = 0; k < runs.length; k++) {
      const [mode, run] = runs[(asked + k) % runs.length]!;
      const t0 = now();
      await run(query);
      ms.get(mode)!.push(now() - t0);
    }
    asked++;
  }
  return { ms, wide };
}

interface Build {
  rows: number;
  /** Append and compact. */
  fillSeconds: number;
  /** Opening the archive with `scalarIndexes: false` on the bare table: the full-text index. */
  fullTextIndexSeconds: number;
  /** Opening it again with the default: the five scalar indexes. */
  scalarIndexSeconds: number;
  /** The table folder once every index is built. */
  diskMiB: number;
}

async function folderMiB(dir: string): Promise<number> {
  const entries = await readdir(dir, { recursive: true, withFileTypes: true });
  const sizes = await Promise.all(entries.filter((e) => e.isFile()).map(async (e) => (await stat(path.join(e.parentPath, e.name))).size));
  return sizes.reduce((a, b) => a + b, 0) / 2 ** 20;
}

/** The run's table sizes, or those of `MEMFOLD_BENCH_READ_ROWS` (comma-separated). */
function tableSizes(options: BenchOptions): number[] {
  const given = process.env.MEMFOLD_BENCH_READ_ROWS?.split(',').map((n) => Number(n.trim().replace(/_/g, '')));
  if (given && given.length > 0 && given.every((n) => Number.isInteger(n) && n > 0)) return [...given].sort((a, b) => a - b);
  return sized(options, { smoke: [1_000], quick: [10_000, 100_000], full: [10_000, 100_000, 1_000_000] });
}

interface SizeContext {
  uri: string;
  rows: number;
  queries: number;
  ask: () => Ask;
  log: (line: string) => void;
}

/** The cells of one table size and index setting; returns the seconds its archives took to open (the index build). */
async function measureSize(context: SizeContext, scalarIndexes: boolean, cells: Cell[]): Promise<number> {
  const { uri, rows, queries, ask, log } = context;
  const embedder = createHashingEmbedder();
  const t0 = now();
  const open = (fusionWeights?: { fullText: number; vector: number }) =>
    openLanceArchive({ uri, embedder, scalarIndexes, ...(fusionWeights ? { fusionWeights } : {}) });
  const archives: Array<[keyof typeof MODES, Archive]> = [];
  for (const [mode, weights] of Object.entries(MODES) as Array<[keyof typeof MODES, (typeof MODES)[keyof typeof MODES]]>)
    archives.push([mode, await open(weights)]);
  const seconds = (now() - t0) / 1000;
  const add = (mode: Mode, ms: number[], wide?: number) => {
    const cell: Cell = {
      rows,
      scalarIndexes,
      mode,
      queries: ms.length,
      p50: percentile(ms, 50),
      p95: percentile(ms, 95),
      ...(wide !== undefined ? { wide } : {}),
    };
    cells.push(cell);
    log(
      `${fmt(rows)} rows, scalar indexes ${scalarIndexes ? 'on' : 'off'}, ${mode}: p50 ${fmt(cell.p50, 1)} ms, p95 ${fmt(cell.p95, 1)} ms (${ms.length} queries)`,
    );
  };
  for (const [mode, archive] of archives) {
    if (mode === 'full text only (default)') {
      // The default archive: its search, LanceDB's own on the same table and the tool, in turn on the same queries.
      const db = await connect(uri);
      const table = await db.openTable(DEFAULT_LANCE_ARCHIVE_OPTIONS.tableName);
      const { ms, wide } = await measurePaired(archive, table, queries, ask);
      for (const [paired, times] of ms) add(paired, times, paired === 'memory_read tool' ? wide : undefined);
      table.close();
      db.close();
    } else add(mode, (await measure(archive, queries, ask)).ms);
    await archive.close();
  }
  return seconds;
}

export async function run(options: BenchOptions): Promise<BenchResult> {
  const sizes = tableSizes(options);
  const queries = sized(options, { smoke: 5, quick: 50, full: 200 });
  const bodyCount = options.smoke ? SMOKE_BODIES : BODIES;
  const random = seeded(7);
  const { sentences, questions } = await locomoPools();
  const bodies = await bodyPool(bodyCount, sentences, random);
  // A folder given keeps its table for the next run, which writes only the rows it lacks.
  const kept = process.env.MEMFOLD_BENCH_READ_DIR;
  const dir = kept ? { dir: kept, remove: async () => undefined } : await tempDir('memory-read');
  const uri = `${dir.dir}/lancedb`;
  const ask = asker(questions, random);
  const cells: Cell[] = [];
  const builds: Build[] = [];
  try {
    let written = kept ? await storedRows(uri) : 0;
    // One table grows from size to size; every size starts with no index and builds them through the archive.
    for (const rows of sizes) {
      if (written > rows) throw new Error(`MEMFOLD_BENCH_READ_DIR holds ${written} rows, more than ${rows}: give each size a folder of its own`);
      const fillSeconds = await fill(uri, written, rows, bodies, random);
      written = rows;
      options.log(`${fmt(rows)} rows written and compacted in ${fmt(fillSeconds, 1)} s`);
      const context = { uri, rows, queries, ask, log: options.log };
      const fullTextIndexSeconds = await measureSize(context, false, cells);
      const scalarIndexSeconds = await measureSize(context, true, cells);
      builds.push({ rows, fillSeconds, fullTextIndexSeconds, scalarIndexSeconds, diskMiB: await folderMiB(uri) });
    }
  } finally {
    await dir.remove();
  }
  return {
    name: 'memory-read-latency',
    title: 'memory_read latency',
    markdown: report(sizes, cells, builds, queries, bodyCount),
    json: { conversations: CONVERSATIONS, bodies: bodyCount, cells, builds },
  };
}

function report(sizes: number[], cells: Cell[], builds: Build[], queries: number, bodies: number): string {
  const modes: Mode[] = [...(Object.keys(MODES) as Mode[]), ...PAIRED];
  const find = (rows: number, scalarIndexes: boolean, mode: Mode) =>
    cells.find((x) => x.rows === rows && x.scalarIndexes === scalarIndexes && x.mode === mode)!;
  const cell = (rows: number, scalarIndexes: boolean, mode: Mode) => {
    const c = find(rows, scalarIndexes, mode);
    return `${fmt(c.p50, 1)} / ${fmt(c.p95, 1)}${c.queries < queries ? ` (${c.queries})` : ''}`;
  };
  const ratio = (rows: number, on: boolean) => {
    const tool = find(rows, on, 'memory_read tool');
    const raw = find(rows, on, 'LanceDB full text, limit 20');
    return `${fmt(tool.p50 / raw.p50, 2)} / ${fmt(tool.p95 / raw.p95, 2)}`;
  };
  const rows = sizes.flatMap((n) => [true, false].map((on) => [fmt(n), on ? 'yes' : 'no', ...modes.map((mode) => cell(n, on, mode)), ratio(n, on)]));
  const tool = cells.filter((c) => c.mode === 'memory_read tool');
  const wide = tool.reduce((a, c) => a + (c.wide ?? 0), 0);
  const asked = tool.reduce((a, c) => a + c.queries, 0);
  return [
    `p50 / p95 in ms over ${fmt(CONVERSATIONS)} conversations, up to ${queries} queries per cell (fewer, in parentheses, when a cell reached its time): ` +
      "a random conversation and one of LoCoMo's 1,986 questions. The tool is asked the question; the searches get the words it searches the archive for (stop and question words dropped). " +
      "The first three columns time `memory.search({ conversationId, query, limit: 5 })`; `LanceDB full text` is LanceDB's own full-text search on the same table, `table.query().where(<conversation, kind transcript>).fullTextSearch(...).limit(n)`, returning the entry's columns (all but the vector), as memory_read's main search asks it (the tool draws 20 candidate segments, 40 for a count or recommendation question). " +
      '`memory_read tool` times `createMemoryReadTool(archive, conversationId).execute({ query })`: the default answer (candidate segments and cleared tool outputs searched, each message ranked with its neighbours, within 3,000 tokens) on the default archive (full text alone with the hashing embedder). ' +
      `The full-text-only search, LanceDB's two searches and the tool are timed on the same queries, in turn; ${fmt(wide)} of their ${fmt(asked)} questions asked a count or a recommendation (40 candidates). ` +
      'Two rows in three are transcript segments (the sentences of a 300-400 character run of LoCoMo sentences as messages a minute apart), one in three a summary of such a run under a batch header (depth 0 or 1); hashing embedder (384 dims); no vector index: vectors are searched flat under the conversation filter.',
    '',
    table(['>archived rows', 'scalar indexes', ...modes.map((m) => `>${m}`), '>tool / LanceDB limit 20'], rows),
    '',
    table(
      ['>archived rows', '>append + compact (s)', '>full-text index on open (s)', '>scalar indexes on open (s)', '>on disk (MiB)'],
      builds.map((b) => [fmt(b.rows), fmt(b.fillSeconds, 1), fmt(b.fullTextIndexSeconds, 1), fmt(b.scalarIndexSeconds, 1), fmt(b.diskMiB)]),
    ),
    '',
    `Rows are appended as Arrow batches of ${fmt(WRITE_BATCH)} to the table the archive created (the adapter's upsert joins on the key and slows as the table grows), ` +
      `with bodies drawn from ${fmt(bodies)} distinct ones embedded once (vectors of the body, header left out). ` +
      'Each size starts with no index: opening the archive with `scalarIndexes: false` builds the full-text index, opening it with the default adds the scalar ones (namespace, conversation_id, depth, kind, key).',
  ].join('\n');
}
