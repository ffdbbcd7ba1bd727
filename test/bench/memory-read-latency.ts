/**
 * memory_read latency: p50 and p95 of `memory.search` (one conversation, limit 5), and of the memory_read tool's default answer, on the
 * real LanceDB archive with the hashing embedder (384 dims), over tables of 10k, 100k and 1M rows (transcripts and summaries) spread
 * over 10k conversations; hybrid, vector only and full text only (the default with this embedder); with and without the scalar indexes.
 *
 * One table grows from size to size. Rows are appended to the table the archive created, then each size starts with
 * no index: opening the archive with `scalarIndexes: false` builds the full-text index (measured first), opening it
 * with the default adds the scalar indexes (measured second). Index build times are reported too.
 */
import { readdir, stat } from 'node:fs/promises';
import path from 'node:path';
import { connect } from '@lancedb/lancedb';
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
import { archiveSchema } from '../../src/archive/lancedb/lancedb-schema.js';
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
type Mode = keyof typeof MODES | 'memory_read tool';

interface Cell {
  rows: number;
  scalarIndexes: boolean;
  mode: Mode;
  queries: number;
  p50: number;
  p95: number;
}

/** Sentences of every LoCoMo turn: the material summaries and queries are drawn from. */
async function sentencePool(): Promise<string[]> {
  const conversations = await loadLocomo(LOCOMO);
  return conversations.flatMap((c) => c.messages.flatMap((m) => m.content.split(/(?<=[.!?])\s+/).filter((s) => s.length > 20)));
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
async function bodyPool(size: number, sentences: readonly string[], random: () => number): Promise<Body[]> {
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
async function fill(uri: string, from: number, to: number, bodies: readonly Body[], random: () => number): Promise<number> {
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

/** Queries per cell, stopping early once a cell has run for CELL_SECONDS (the slow cells of the largest table). */
async function measure(memory: Archive, queries: number, sentences: readonly string[], random: () => number): Promise<{ ms: number[] }> {
  const ask = () => {
    const words = sentences[Math.floor(random() * sentences.length)]!.split(/\s+/);
    const at = Math.floor(random() * Math.max(1, words.length - 4));
    return { conversationId: `conv-${String(Math.floor(random() * CONVERSATIONS)).padStart(5, '0')}`, query: words.slice(at, at + 4).join(' '), limit: 5 };
  };
  for (let i = 0; i < 5; i++) await memory.search(ask()); // warm-up
  const ms: number[] = [];
  const started = now();
  while (ms.length < queries && now() - started < CELL_SECONDS * 1000) {
    const query = ask();
    const t0 = now();
    await memory.search(query);
    ms.push(now() - t0);
  }
  return { ms };
}

/** The same, through the memory_read tool's default query path (candidate segments, message ranking, one budget). */
async function measureTool(memory: Archive, queries: number, sentences: readonly string[], random: () => number): Promise<{ ms: number[]; tokens: number[] }> {
  const ask = () => {
    const words = sentences[Math.floor(random() * sentences.length)]!.split(/\s+/);
    const at = Math.floor(random() * Math.max(1, words.length - 4));
    return { conversationId: `conv-${String(Math.floor(random() * CONVERSATIONS)).padStart(5, '0')}`, query: words.slice(at, at + 4).join(' ') };
  };
  const run = async ({ conversationId, query }: { conversationId: string; query: string }) => createMemoryReadTool(memory, conversationId).execute({ query });
  for (let i = 0; i < 5; i++) await run(ask()); // warm-up
  const ms: number[] = [];
  const tokens: number[] = [];
  const started = now();
  while (ms.length < queries && now() - started < CELL_SECONDS * 1000) {
    const t0 = now();
    const answer = await run(ask());
    ms.push(now() - t0);
    tokens.push(Math.ceil(answer.output.length / 4));
  }
  return { ms, tokens };
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

export async function run(options: BenchOptions): Promise<BenchResult> {
  const sizes = sized(options, { smoke: [1_000], quick: [10_000, 100_000], full: [10_000, 100_000, 1_000_000] });
  const queries = sized(options, { smoke: 5, quick: 50, full: 200 });
  const bodyCount = options.smoke ? SMOKE_BODIES : BODIES;
  const random = seeded(7);
  const sentences = await sentencePool();
  const bodies = await bodyPool(bodyCount, sentences, random);
  const dir = await tempDir('memory-read');
  const uri = `${dir.dir}/lancedb`;
  const embedder = createHashingEmbedder();
  const cells: Cell[] = [];
  const builds: Build[] = [];
  try {
    let written = 0;
    // One table grows from size to size; every size starts with no index and builds them through the archive.
    for (const rows of sizes) {
      const fillSeconds = await fill(uri, written, rows, bodies, random);
      written = rows;
      options.log(`${fmt(rows)} rows written and compacted in ${fmt(fillSeconds, 1)} s`);
      const build: Build = { rows, fillSeconds, fullTextIndexSeconds: 0, scalarIndexSeconds: 0, diskMiB: 0 };
      for (const scalarIndexes of [false, true]) {
        const t0 = now();
        const open = (fusionWeights?: { fullText: number; vector: number }) =>
          openLanceArchive({ uri, embedder, scalarIndexes, ...(fusionWeights ? { fusionWeights } : {}) });
        const archives: Array<[Mode, Archive]> = [];
        for (const [mode, weights] of Object.entries(MODES) as Array<[keyof typeof MODES, (typeof MODES)[keyof typeof MODES]]>)
          archives.push([mode, await open(weights)]);
        // memory_read's default query path, on the default archive.
        archives.push(['memory_read tool', await open()]);
        build[scalarIndexes ? 'scalarIndexSeconds' : 'fullTextIndexSeconds'] = (now() - t0) / 1000;
        for (const [mode, archive] of archives) {
          const { ms } =
            mode === 'memory_read tool' ? await measureTool(archive, queries, sentences, random) : await measure(archive, queries, sentences, random);
          const cell = { rows, scalarIndexes, mode, queries: ms.length, p50: percentile(ms, 50), p95: percentile(ms, 95) };
          cells.push(cell);
          options.log(
            `${fmt(rows)} rows, scalar indexes ${scalarIndexes ? 'on' : 'off'}, ${mode}: p50 ${fmt(cell.p50, 1)} ms, p95 ${fmt(cell.p95, 1)} ms (${ms.length} queries)`,
          );
          await archive.close();
        }
      }
      build.diskMiB = await folderMiB(uri);
      builds.push(build);
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
  const modes: Mode[] = [...(Object.keys(MODES) as Mode[]), 'memory_read tool'];
  const cell = (rows: number, scalarIndexes: boolean, mode: Mode) => {
    const c = cells.find((x) => x.rows === rows && x.scalarIndexes === scalarIndexes && x.mode === mode)!;
    return `${fmt(c.p50, 1)} / ${fmt(c.p95, 1)}${c.queries < queries ? ` (${c.queries})` : ''}`;
  };
  const rows = sizes.flatMap((n) => [true, false].map((on) => [fmt(n), on ? 'yes' : 'no', ...modes.map((mode) => cell(n, on, mode))]));
  return [
    `p50 / p95 in ms of \`memory.search({ conversationId, query, limit: 5 })\` (what memory_read runs) over ${fmt(CONVERSATIONS)} conversations, ` +
      `${queries} queries per cell (fewer, in parentheses, when a cell reached ${CELL_SECONDS} s): a random conversation and four consecutive words of a LoCoMo sentence. ` +
      'Two rows in three are transcript segments (the sentences of a 300-400 character run of LoCoMo sentences as messages a minute apart), one in three a summary of such a run under a batch header (depth 0 or 1); hashing embedder (384 dims); no vector index: vectors are searched flat under the conversation filter. ' +
      'The `memory_read tool` column times `createMemoryReadTool(archive, conversationId).execute({ query })` (the default answer: candidate segments, each message ranked with its neighbours, within 3,000 tokens) on the default archive (full text alone with the hashing embedder).',
    '',
    table(['>archived rows', 'scalar indexes', ...modes.map((m) => `>${m}`)], rows),
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
