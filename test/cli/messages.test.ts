/**
 * What the CLI tells its user when something is off: an unknown help topic, a compaction that finds
 * nothing to do, a bad URL in the environment, a store that is not there or not initialized, message
 * content full of terminal escapes, and a long compaction's progress. Each runs the CLI's `main` in this
 * process (parsing, configuration, output included) on a home of its own.
 */
import { existsSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import pg from 'pg';
import { beforeAll, describe, expect, it } from 'vitest';
import { runCli } from '../support/run-cli.js';
import type { NewMessage } from '../../src/conversation/types.js';
import { createKyselyPersistence } from '../../src/persistence/kysely/kysely-store.js';
import { copyPgliteTemplateTo, createPostgresTestDatabase, postgresServerUrl } from '../support/backends.js';
import { fileCleanups } from '../support/cleanups.js';

const cleanups = fileCleanups();
const tempDir = cleanups.tempDir;

/** A home holding a migrated PGlite store (a copy of the prepared template). */
async function storeHome(): Promise<string> {
  const home = await tempDir('memfold-msg-');
  copyPgliteTemplateTo(path.join(home, 'pg'));
  return home;
}

async function seed(home: string, conversationId: string, messages: NewMessage[]): Promise<void> {
  const store = await createKyselyPersistence({ dialect: 'pglite', dataDir: path.join(home, 'pg') });
  try {
    await store.append(conversationId, messages);
  } finally {
    await store.close();
  }
}

/** One `memfold` command, with a progress stream (what it draws is in `progress`). */
const memfold = (args: string[], options: { env?: Record<string, string>; tty?: boolean } = {}) => runCli(args, { progress: true, ...options });

function turns(count: number, text: (i: number) => string): NewMessage[] {
  return Array.from({ length: count }, (_, i) => ({
    role: i % 2 === 0 ? 'user' : 'assistant',
    content: text(i),
    createdAt: new Date(Date.UTC(2024, 4, 1, 9, i)).toISOString(),
  }));
}

describe('memfold help', () => {
  it('an unknown topic is refused with exit 2, naming it', async () => {
    const unknown = await memfold(['help', 'frobnicate']);
    expect(unknown.code).toBe(2);
    expect(unknown.stderr).toContain('unknown command "frobnicate"');
    expect(unknown.stdout).toBe('');
    const prototypeKey = await memfold(['help', 'constructor']);
    expect(prototypeKey.code).toBe(2);
    expect(prototypeKey.stderr).toContain('unknown command "constructor"');

    const known = await memfold(['help', 'compact']);
    expect(known.code).toBe(0);
    expect(known.stdout).toContain('--force');
  });
});

describe('memfold compact', () => {
  let home: string;
  beforeAll(async () => {
    home = await storeHome();
    await seed(
      home,
      'short',
      turns(2, (i) => `turn ${i}: a short exchange about herons`),
    );
  });

  it('with --force and nothing between the kept head and tail, says so without offering --force', async () => {
    const forced = await memfold(['compact', 'short', '--force', '--home', home]);
    expect(forced.code, forced.stderr).toBe(0);
    expect(forced.stdout).toContain('skipped: nothing to compact (2 messages');
    expect(forced.stdout).toMatch(/opening turns \(keepFirstTurns 1\) or the recent tail \(keepRecentMessages 6, keepRecentTokens \d+\)/);
    expect(forced.stdout).toContain('with or without --force');
    expect(forced.stdout).not.toContain('--force compacts anyway');

    const empty = await memfold(['compact', 'nobody-here', '--force', '--home', home]);
    expect(empty.stdout).toContain('skipped: nothing to compact: conversation nobody-here has no messages');
  });

  it('without --force under the trigger, names the trigger and offers --force', async () => {
    const below = await memfold(['compact', 'short', '--home', home]);
    expect(below.code, below.stderr).toBe(0);
    expect(below.stdout).toMatch(/skipped: below the trigger \(2 messages, \d+ tokens; compaction starts at 102400 tokens; --force compacts anyway\)/);
  });

  it('an out-of-range --window exits 2 naming the flag, before anything is opened', async () => {
    const fresh = path.join(await tempDir('memfold-window-'), 'home');
    const refused = await memfold(['compact', 'c1', '--window', '100', '--home', fresh]);
    expect(refused.code).toBe(2);
    expect(refused.stderr).toContain('Invalid argument --window: must be an integer >= 256 (got 100)');
    expect(existsSync(fresh)).toBe(false);
  });
});

describe('bad URLs in the environment', () => {
  it.each([
    ['OPENAI_BASE_URL', 'not a url'],
    ['OPENAI_BASE_URL', 'ftp://x'],
    ['DATABASE_URL', 'hello world'],
    ['DATABASE_URL', 'mysql://root:hunter2@db/app'],
  ])('%s=%j: exit 1 naming the variable, before anything is opened', async (name, value) => {
    const home = path.join(await tempDir('memfold-url-'), 'home');
    for (const args of [['context', 'c1'], ['compact', 'c1'], ['migrate']]) {
      const result = await memfold([...args, '--home', home], { env: { [name]: value } });
      expect(result.code).toBe(1);
      expect(result.stderr).toContain(`Invalid config field ${name}: must be a`);
      expect(result.stderr).not.toMatch(/unexpected error|ENOTFOUND|hunter2/);
    }
    expect(existsSync(home)).toBe(false);
  });
});

describe('read commands on the embedded default', () => {
  it('a home with no store is refused as a bad --home (exit 2, naming the path), and nothing is created', async () => {
    const home = path.join(await tempDir('memfold-nohome-'), 'home');
    for (const args of [
      ['context', 'c1'],
      ['inspect', 'c1'],
      ['search', 'herons', '--conversation', 'c1'],
    ]) {
      const result = await memfold([...args, '--home', home]);
      expect(result.code).toBe(2);
      expect(result.stderr).toContain(`no store at ${path.join(home, 'pg')} yet: import or append messages first`);
      expect(result.stdout).toBe('');
    }
    expect(existsSync(home)).toBe(false);
  });
});

describe('read commands write nothing', () => {
  it('an interrupted compaction stays pending through context, search and inspect; reconcile then undoes it', async () => {
    const home = await storeHome();
    await seed(
      home,
      'c1',
      turns(4, (i) => `turn ${i} about herons`),
    );
    const pending = async () => {
      const store = await createKyselyPersistence({ dialect: 'pglite', dataDir: path.join(home, 'pg') });
      try {
        return (await store.listPendingOperations()).map((op) => op.status);
      } finally {
        await store.close();
      }
    };
    const store = await createKyselyPersistence({ dialect: 'pglite', dataDir: path.join(home, 'pg') });
    const [first] = await store.loadHistory('c1');
    await store.recordOperation({ id: 'op-interrupted', conversationId: 'c1', status: 'planned', messageIds: [first!.id], labels: [] });
    await store.close();

    for (const args of [
      ['context', 'c1'],
      ['inspect', 'c1'],
      ['search', 'herons', '--conversation', 'c1'],
    ]) {
      const result = await memfold([...args, '--home', home]);
      expect(result.code, result.stderr).toBe(0);
      expect(await pending(), args.join(' ')).toEqual(['planned']);
    }
    const reconcile = await memfold(['reconcile', '--home', home]);
    expect(reconcile.stdout).toContain('op-interrupted: rolled_back');
    expect(await pending()).toEqual([]);
  });
});

describe('stored content on a terminal', () => {
  // ESC sequences that would clear the screen, retitle the window and recolour text; a C1 CSI; DEL.
  const hostile = 'the heron \u001b[2J\u001b]0;owned\u0007 counts \u001b[31mseven\u001b[0m \u009b2J tail\u007f\r overwritten';
  const conversation = 'tty\u009b2J';
  let home: string;
  beforeAll(async () => {
    home = await storeHome();
    await seed(
      home,
      conversation,
      turns(40, (i) => `turn ${i}: ${hostile} ${'filler words about the ledger '.repeat(6)}`),
    );
    const compact = await memfold(['compact', conversation, '--force', '--window', '2000', '--json', '--home', home]);
    expect(compact.code, compact.stderr).toBe(0);
  }, 120_000);

  const hasControl = (text: string) => /[\u0000-\u0008\u000b-\u001f\u007f-\u009f]/.test(text);

  it('context, search and inspect escape control characters on a TTY, keeping lines and tabs', async () => {
    const runs = [
      ['context', conversation],
      ['search', 'heron counts seven', '--conversation', conversation, '--kind', 'transcript'],
      ['inspect', conversation],
    ];
    for (const args of runs) {
      const shown = await memfold([...args, '--home', home], { tty: true });
      expect(shown.code, shown.stderr).toBe(0);
      expect(hasControl(shown.stdout), `${args[0]} printed a raw control character`).toBe(false);
      expect(shown.stdout).toContain('\n');
      expect(shown.stdout).toContain(args[0] === 'inspect' ? 'depth 0' : 'the heron \\u001b[2J\\u001b]0;owned\\u0007 counts \\u001b[31mseven');
    }
    // What inspect prints of a conversation without batches: its id, escaped too.
    const none = await memfold(['inspect', 'none\u001b[2J', '--home', home], { tty: true });
    expect(none.stdout).toBe('conversation none\\u001b[2J has no archived batches\nno live messages\n');
  });

  it('into a pipe, and with --json, the content is unchanged', async () => {
    const piped = await memfold(['context', conversation, '--home', home]);
    expect(piped.stdout).toContain(hostile);
    const json = await memfold(['context', conversation, '--json', '--home', home], { tty: true });
    const messages = JSON.parse(json.stdout) as Array<{ content: string }>;
    expect(messages.at(-1)!.content).toContain(hostile);
  });
});

describe('compaction progress', () => {
  it('draws the stages and a bar of chunks summarized on the progress stream; stdout stays pure JSON', async () => {
    const home = await storeHome();
    await seed(
      home,
      'long',
      turns(60, (i) => `turn ${i}: ${'the ledger of the heron colony, counted twice. '.repeat(8)}`),
    );
    const compact = await memfold(['compact', 'long', '--force', '--window', '2000', '--json', '--home', home]);
    expect(compact.code, compact.stderr).toBe(0);
    const result = JSON.parse(compact.stdout) as { status: string; batches: unknown[] };
    expect(result.status).toBe('compacted');
    const chunks = result.batches.length;
    expect(chunks).toBeGreaterThan(1);
    expect(compact.progress).toContain('compact: summarizing the compactable messages, chunk by chunk\n');
    expect(compact.progress).toContain(`chunks summarized [${'#'.repeat(30)}] ${chunks}/${chunks}\n`);
    expect(compact.progress).toContain('compact: archiving the summaries and the verbatim transcript\n');
    expect(compact.progress).toContain('compact: removing the archived messages from the live table\n');
    expect(compact.stderr).toBe('');
  }, 120_000);
});

const serverUrl = postgresServerUrl();
describe.skipIf(serverUrl === undefined)('read commands on a PostgreSQL database memfold has not initialized', () => {
  async function tables(url: string): Promise<string[]> {
    const client = new pg.Client({ connectionString: url });
    await client.connect();
    try {
      const rows = await client.query<{ table_name: string }>(
        "select table_name from information_schema.tables where table_schema in ('public', 'memfold') order by 1",
      );
      return rows.rows.map((row) => row.table_name);
    } finally {
      await client.end();
    }
  }

  it('refuse naming memfold migrate and create no table; after memfold migrate they work', async () => {
    const database = await createPostgresTestDatabase(serverUrl!);
    cleanups.add(() => database.drop());
    const env = { DATABASE_URL: database.url, MEMFOLD_HOME: await tempDir('memfold-pgread-') };
    for (const args of [
      ['context', 'x'],
      ['inspect', 'x'],
      ['search', 'anything', '--conversation', 'x'],
    ]) {
      const refused = await memfold(args, { env });
      expect(refused.code).toBe(1);
      expect(refused.stderr).toMatch(/The database is not initialized for memfold .*run `memfold migrate`/);
      expect(await tables(database.url)).toEqual([]);
    }

    const migrated = await memfold(['migrate'], { env });
    expect(migrated.code, migrated.stderr).toBe(0);
    const context = await memfold(['context', 'x'], { env });
    expect(context.code, context.stderr).toBe(0);
    expect(context.stdout).toContain('conversation x has no messages');

    // A database one migration behind is named as such.
    const client = new pg.Client({ connectionString: database.url });
    await client.connect();
    await client.query('delete from memfold.memfold_migrations where name = (select max(name) from memfold.memfold_migrations)');
    await client.end();
    const behind = await memfold(['context', 'x'], { env });
    expect(behind.code).toBe(1);
    expect(behind.stderr).toMatch(/The database is behind by 1 migration \(\d{3}_[\w-]+\.sql\): run `memfold migrate`/);
  }, 120_000);
});

describe('bad input is refused before anything opens', () => {
  it("help search offers the kinds memory_read accepts, and search refuses another (and memory_read's other limits) with exit 2", async () => {
    const help = await memfold(['help', 'search']);
    expect(help.stdout).toContain('--kind <summary|transcript>');
    expect(help.stdout).not.toContain('tool_output');
    const fresh = path.join(await tempDir('memfold-search-'), 'home');
    for (const [flags, named] of [
      [['--kind', 'tool_output'], 'Invalid argument --kind: must be summary or transcript (got "tool_output")'],
      [['--limit', '50'], 'Invalid argument --limit: must be an integer from 1 to 20'],
      [['--from', 'yesterday'], 'Invalid argument --from:'],
    ] as const) {
      const refused = await memfold(['search', 'herons', '--conversation', 'c1', ...flags, '--home', fresh]);
      expect(refused.code, refused.stderr).toBe(2);
      expect(refused.stderr).toContain(named);
    }
    expect(existsSync(fresh)).toBe(false);
  });

  it('resummarize of a depth with fewer than two frontier batches exits 2 naming --depth', async () => {
    const home = await storeHome();
    await seed(
      home,
      'flat',
      turns(4, (i) => `turn ${i}: herons`),
    );
    const result = await memfold(['resummarize', 'flat', '--depth', '3', '--home', home]);
    expect(result.code).toBe(2);
    expect(result.stderr).toContain('Invalid argument --depth: needs at least 2 frontier batches of depth 3 (found 0)');
    expect(result.stdout).toBe('');
  });

  it('import of a file whose line names no conversation (and no --conversation) fails on that line without making a home', async () => {
    const dir = await tempDir('memfold-import-');
    const file = path.join(dir, 'chat.jsonl');
    writeFileSync(file, `${JSON.stringify({ role: 'user', content: 'hello herons' })}\n`);
    const home = path.join(dir, 'home');
    const result = await memfold(['import', file, '--home', home]);
    expect(result.code).toBe(1);
    expect(result.stderr).toContain('line 1.conversation_id: is missing');
    expect(existsSync(home)).toBe(false);
  });

  it('mcp (--read-only or not) pointed at a home with no store, or at a file, exits 2 naming it before serving, and creates nothing', async () => {
    const dir = await tempDir('memfold-mcp-home-');
    const missing = path.join(dir, 'mistyped');
    const file = path.join(dir, 'a-file');
    writeFileSync(file, 'not a home');
    for (const home of [missing, file]) {
      for (const mode of [['--read-only'], []]) {
        const result = await memfold(['mcp', '--conversation', 'c1', ...mode, '--home', home]);
        expect(result.code, result.stderr).toBe(2);
        expect(result.stderr.split('\n')[0]).toContain(`Invalid argument --home: no ${mode.length > 0 ? 'archive' : 'store'} at ${home}`);
        expect(result.stdout).toBe('');
      }
    }
    expect(existsSync(missing)).toBe(false);
  });
});
