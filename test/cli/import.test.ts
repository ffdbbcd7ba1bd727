/**
 * `memfold import` through the CLI's `main`, in this process, on a fresh home per test: a failing
 * file writes nothing, a re-run appends nothing, an extended file appends only its new lines, an id
 * the conversation already used for another message (live or archived) refuses the file, and every
 * error names the file's line and field. The store-facing cases run on PGlite and, with
 * DATABASE_URL, on PostgreSQL.
 */
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { runCli, type CliResult } from '../support/run-cli.js';
import { copyPgliteTemplateTo, createPostgresTestDatabase, persistenceBackends, type BackendName } from '../support/backends.js';

interface Home {
  dir: string;
  /** Runs one `memfold` command on this home (and its database), with `env` set for its duration. */
  memfold(args: string[], env?: Record<string, string>): Promise<CliResult>;
  /** Writes `lines` (JSON objects, or raw strings) as a JSONL file in the home; returns its path. */
  file(name: string, lines: ReadonlyArray<object | string>): Promise<string>;
}

const cleanups: Array<() => Promise<void>> = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0)) await cleanup();
});

async function openHome(backend: BackendName = 'pglite'): Promise<Home> {
  const dir = await mkdtemp(path.join(os.tmpdir(), 'memfold-import-'));
  cleanups.push(() => rm(dir, { recursive: true, force: true }));
  let databaseUrl: string | undefined;
  if (backend === 'pglite') {
    copyPgliteTemplateTo(path.join(dir, 'pg'));
  } else {
    const database = await createPostgresTestDatabase(process.env.DATABASE_URL!);
    cleanups.push(() => database.drop());
    databaseUrl = database.url;
  }
  return {
    dir,
    memfold: (args, env = {}) =>
      runCli([...args, '--home', dir], { env: { ...(databaseUrl === undefined ? {} : { DATABASE_URL: databaseUrl }), ...env }, progress: true }),
    async file(name, lines) {
      const file = path.join(dir, name);
      await writeFile(file, lines.map((line) => (typeof line === 'string' ? line : JSON.stringify(line))).join('\n') + '\n');
      return file;
    },
  };
}

interface Stored {
  id: string;
  role: string;
  content: string;
  kind: string;
  createdAt: string;
}

async function contextOf(home: Home, conversation: string): Promise<Stored[]> {
  const shown = await home.memfold(['context', conversation, '--json']);
  expect(shown.code, shown.stderr).toBe(0);
  return JSON.parse(shown.stdout) as Stored[];
}

/** The 200-line conversation of the bug report: ids m000..m199, one line a minute. */
function reportLines(): Array<Record<string, string>> {
  return Array.from({ length: 200 }, (_, i) => ({
    id: `m${String(i).padStart(3, '0')}`,
    role: i % 2 === 0 ? 'user' : 'assistant',
    conversation_id: 're',
    content: `turn ${String(i).padStart(3, '0')} ${'lorem ipsum dolor sit amet '.repeat(8)}`,
    created_at: new Date(Date.UTC(2024, 0, 1, Math.floor(i / 60), i % 60)).toISOString(),
  }));
}

const call = (id: string) => ({ id, type: 'function', function: { name: 'lookup', arguments: '{}' } });

for (const backend of persistenceBackends().map((b) => b.name)) {
  describe(`${backend}: memfold import`, () => {
    it('writes nothing when a later line fails, even for conversations the file finished earlier', async () => {
      const home = await openHome(backend);
      // The store exists already: the failing file must leave it as it was (a file that fails on its own lines
      // fails before any store is opened or made).
      expect((await home.memfold(['migrate'])).code).toBe(0);
      const file = await home.file('p.jsonl', [
        { role: 'user', content: 'A1', conversation_id: 'pa' },
        { role: 'user', content: 'B1', conversation_id: 'pb' },
        { role: 'tool', content: 'r', tool_call_id: 'nope', conversation_id: 'pb' },
      ]);
      const imported = await home.memfold(['import', file]);
      expect(imported.code).toBe(1);
      expect(imported.stderr).toContain('Invalid argument line 3.tool_call_id: "nope" answers no tool call');
      expect(await contextOf(home, 'pa')).toEqual([]);
      expect(await contextOf(home, 'pb')).toEqual([]);
    });

    it('a re-run appends nothing; an extended file appends only its new lines', async () => {
      const home = await openHome(backend);
      const lines: object[] = [
        { role: 'user', content: 'Where is order 7?', created_at: '2024-05-01T10:00:00Z' },
        { role: 'assistant', content: null, tool_calls: [call('c1')] },
        { role: 'tool', tool_call_id: 'c1', content: '{"status":"shipped"}' },
        { id: 'answer-1', role: 'assistant', content: 'It shipped.' },
        { role: 'user', content: 'Thanks!' },
      ];
      const first = await home.file('chat.jsonl', lines);
      const once = await home.memfold(['import', first, '--conversation', 'c']);
      expect(once.code, once.stderr).toBe(0);
      expect(once.stdout.trim()).toBe('c: 5 messages appended, 0 skipped (already imported)');
      const again = await home.memfold(['import', first, '--conversation', 'c', '--json']);
      expect(again.code, again.stderr).toBe(0);
      expect(JSON.parse(again.stdout)).toEqual({ imported: { c: 0 }, skipped: { c: 5 } });
      expect((await contextOf(home, 'c')).map((m) => m.content)).toEqual(['Where is order 7?', '', '{"status":"shipped"}', 'It shipped.', 'Thanks!']);

      // The same lines and more: the new call's result follows lines that are already stored.
      const extended = await home.file('chat.jsonl', [
        ...lines,
        { role: 'assistant', content: '', tool_calls: [call('c2')] },
        { role: 'tool', tool_call_id: 'c2', content: 'ok' },
      ]);
      const more = await home.memfold(['import', extended, '--conversation', 'c']);
      expect(more.code, more.stderr).toBe(0);
      expect(more.stdout.trim()).toBe('c: 2 messages appended, 5 skipped (already imported)');
      const stored = await contextOf(home, 'c');
      expect(stored).toHaveLength(7);
      // Lines without an id get line-{line}-{12 hex of the line's sha256}; an id given is kept.
      expect(stored.map((m) => m.id)).toEqual(expect.arrayContaining(['answer-1']));
      expect(stored.filter((m) => m.id !== 'answer-1').every((m) => /^line-[1-7]-[0-9a-f]{12}$/.test(m.id))).toBe(true);
    });

    it('refuses an id already used by an archived message, naming the line, and skips the same message', async () => {
      const home = await openHome(backend);
      const lines = reportLines();
      const a = await home.file('a.jsonl', lines);
      expect((await home.memfold(['import', a])).stdout.trim()).toBe('re: 200 messages appended, 0 skipped (already imported)');
      const compacted = await home.memfold(['compact', 're', '--force', '--window', '4000', '--json']);
      expect(compacted.code, compacted.stderr).toBe(0);
      expect((JSON.parse(compacted.stdout) as { archivedMessages: number }).archivedMessages).toBeGreaterThan(20);

      // Lines 3..186 again, with edited text and the same ids (m002 is archived).
      const edited = lines.slice(2, 186).map((line) => ({ ...line, content: line.content!.replace('turn ', 'EDITED turn ') }));
      const b = await home.file('b.jsonl', edited);
      const refused = await home.memfold(['import', b]);
      expect(refused.code).toBe(1);
      expect(refused.stderr).toContain('Invalid argument line 1.id: "m002" is already used in conversation "re" by another message');
      const search = await home.memfold(['search', 'EDITED turn', '--conversation', 're', '--kind', 'transcript', '--json']);
      expect(search.stdout).not.toMatch(/EDITED turn \d/);
      expect((await contextOf(home, 're')).some((m) => m.content.includes('EDITED'))).toBe(false);

      // The very same lines are already imported, archived or live: nothing to append.
      const same = await home.file('same.jsonl', lines.slice(2, 186));
      const skipped = await home.memfold(['import', same, '--json']);
      expect(skipped.code, skipped.stderr).toBe(0);
      expect(JSON.parse(skipped.stdout)).toEqual({ imported: { re: 0 }, skipped: { re: 184 } });
    }, 120_000);

    it('a leading tool result must answer the last stored message, as append requires', async () => {
      const home = await openHome(backend);
      const opened = await home.file('open.jsonl', [
        { role: 'user', content: 'Check order 9' },
        { role: 'assistant', content: '', tool_calls: [call('c9')] },
      ]);
      expect((await home.memfold(['import', opened, '--conversation', 't'])).code).toBe(0);
      const stray = await home.file('stray.jsonl', [{ role: 'tool', tool_call_id: 'c8', content: 'late' }]);
      const refused = await home.memfold(['import', stray, '--conversation', 't']);
      expect(refused.code).toBe(1);
      expect(refused.stderr).toContain('Invalid argument line 1.tool_call_id: "c8" answers no tool call');
      const answer = await home.file('answer.jsonl', [
        { role: 'tool', tool_call_id: 'c9', content: 'delivered' },
        { role: 'assistant', content: 'Delivered.' },
      ]);
      const accepted = await home.memfold(['import', answer, '--conversation', 't']);
      expect(accepted.code, accepted.stderr).toBe(0);
      expect((await contextOf(home, 't')).map((m) => m.content)).toEqual(['Check order 9', '', 'delivered', 'Delivered.']);
    });
  });
}

describe('memfold import: input and messages', () => {
  it.each([
    ['2023-02-30', 'a day February does not have'],
    ['1 2 3', 'no ISO 8601 time'],
  ])('refuses created_at %j (%s), naming the line, and writes nothing', async (createdAt) => {
    const home = await openHome();
    const file = await home.file('d.jsonl', [
      { role: 'user', content: 'x', created_at: '2023-02-28' },
      { role: 'user', content: 'y', created_at: createdAt },
    ]);
    const imported = await home.memfold(['import', file, '--conversation', 'd']);
    expect(imported.code).toBe(1);
    expect(imported.stderr).toContain('Invalid argument line 2.created_at: must be an ISO 8601 date or time');
    expect(await contextOf(home, 'd')).toEqual([]);
  });

  it('accepts a UTF-8 byte order mark at the start of the file', async () => {
    const home = await openHome();
    const file = await home.file('bom.jsonl', [`\uFEFF${JSON.stringify({ role: 'user', content: 'first' })}`, { role: 'assistant', content: 'second' }]);
    const imported = await home.memfold(['import', file, '--conversation', 'bom']);
    expect(imported.code, imported.stderr).toBe(0);
    expect((await contextOf(home, 'bom')).map((m) => m.content)).toEqual(['first', 'second']);
  });

  it('an empty file, or one of blank lines, imports 0 messages', async () => {
    const home = await openHome();
    for (const text of ['', '\n  \n\r\n']) {
      const file = path.join(home.dir, 'empty.jsonl');
      await writeFile(file, text);
      const imported = await home.memfold(['import', file]);
      expect(imported.code, imported.stderr).toBe(0);
      expect(imported.stdout.trim()).toBe('0 messages');
    }
  });

  it('a numeric conversation_id must be a string; a line naming no conversation without --conversation is named', async () => {
    const home = await openHome();
    const numeric = await home.file('n.jsonl', [{ role: 'user', content: 'x', conversation_id: 42 }]);
    const refused = await home.memfold(['import', numeric]);
    expect(refused.code).toBe(1);
    expect(refused.stderr).toContain('Invalid argument line 1.conversation_id: must be a string, got 42');
    const missing = await home.file('m.jsonl', [
      { role: 'user', content: 'x', conversation_id: 'c' },
      { role: 'user', content: 'y' },
    ]);
    const unnamed = await home.memfold(['import', missing]);
    expect(unnamed.code).toBe(1);
    expect(unnamed.stderr).toContain('Invalid argument line 2.conversation_id: is missing');
    expect(unnamed.stderr).toContain('--conversation');
    expect(await contextOf(home, 'c')).toEqual([]);
  });

  it.each([
    [
      'the size limit',
      [
        { role: 'user', content: 'short' },
        { role: 'user', content: 'x'.repeat(200) },
      ],
      'line 2.content: is 200 bytes of UTF-8',
    ],
    [
      'a duplicate id',
      [
        { id: 'a', role: 'user', content: 'x' },
        { role: 'user', content: 'y' },
        { id: 'a', role: 'user', content: 'z' },
      ],
      'line 3.id: duplicates line 1.id',
    ],
    ['a tool call id repeated in one message', [{ role: 'assistant', content: '', tool_calls: [call('k'), call('k')] }], 'line 1.tool_calls[1].id: duplicates'],
    ['the clip-archive id', [{ id: 'clip-archive-c', role: 'user', content: 'x' }], 'line 1.id: "clip-archive-c" is reserved'],
    ['a tool message without its call id', [{ role: 'tool', content: 'x' }], 'line 1.tool_call_id: is required'],
    [
      'a result after another message',
      [
        { role: 'assistant', content: '', toolCalls: [call('k')] },
        { role: 'user', content: 'hm?' },
        { role: 'tool', toolCallId: 'k', content: 'x' },
      ],
      'line 3.toolCallId: "k" answers no tool call',
    ],
  ])('names the file line and field for %s', async (_, lines, expected) => {
    const home = await openHome();
    const file = await home.file('bad.jsonl', lines);
    const imported = await home.memfold(['import', file, '--conversation', 'c'], { MEMFOLD_MAX_MESSAGE_BYTES: '100' });
    expect(imported.code).toBe(1);
    expect(imported.stderr).toContain(`Invalid argument ${expected}`);
    expect(imported.stderr).not.toContain('messages[');
    expect(await contextOf(home, 'c')).toEqual([]);
  });
});

describe('memfold import: long files', () => {
  it('draws progress for each pass on the progress stream, never on stdout', async () => {
    const home = await openHome();
    const lines = Array.from({ length: 12_000 }, (_, i) => ({ role: i % 2 === 0 ? 'user' : 'assistant', content: `message ${i}` }));
    const file = await home.file('long.jsonl', lines);
    const imported = await home.memfold(['import', file, '--conversation', 'long', '--json']);
    const drawn = imported.progress;
    expect(imported.code, imported.stderr).toBe(0);
    expect(JSON.parse(imported.stdout)).toEqual({ imported: { long: 12_000 }, skipped: { long: 0 } });
    expect(drawn).toMatch(/^checking \[/m);
    expect(drawn).toContain('importing [##############################] 12000/12000');
  }, 120_000);
});
