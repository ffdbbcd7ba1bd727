/**
 * `memfold list`, `memfold export` and `memfold erase` through the CLI's `main` on an embedded home: the listing as text
 * and JSON, the export as JSON Lines on stdout and into a file, erase refusing without --yes (saying what would go,
 * exit 1, nothing removed) and erasing with it.
 */
import { readFile, rm } from 'node:fs/promises';
import path from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { createMemfold } from '../../src/memfold.js';
import { copyPgliteTemplateTo } from '../support/backends.js';
import { fileCleanups } from '../support/cleanups.js';
import { runCli } from '../support/run-cli.js';
import { filesContaining, markedTurns, uniqueWord } from './manage-fixtures.js';

const cleanups = fileCleanups();
const marker = uniqueWord('zorblax');

describe('memfold list, export and erase', () => {
  let home: string;
  beforeAll(async () => {
    home = await cleanups.tempDir('memfold-manage-cli-');
    copyPgliteTemplateTo(path.join(home, 'pg'));
    const memfold = await createMemfold({ config: { home }, env: {}, compaction: { contextWindow: 4_096 } });
    try {
      for (let from = 0; from < 24; from += 4) {
        await memfold.append('doomed', markedTurns(marker, 4, from));
        await memfold.compact('doomed');
      }
      await memfold.append('kept', markedTurns('other', 2));
    } finally {
      await memfold.close();
    }
  });

  it('lists the conversations, as text and as JSON', async () => {
    const text = await runCli(['list', '--home', home]);
    expect(text.code, text.stderr).toBe(0);
    expect(text.stdout).toMatch(/^kept\s+8 live messages {2}updated \d{4}-/m);
    expect(text.stdout).toMatch(/^doomed\s+\d+ live messages/m);
    const json = await runCli(['list', '--json', '--home', home]);
    expect(
      JSON.parse(json.stdout)
        .map((c: { id: string }) => c.id)
        .sort(),
    ).toEqual(['doomed', 'kept']);
  });

  it('exports JSON Lines to stdout and to a file', async () => {
    const stdout = await runCli(['export', 'doomed', '--home', home]);
    expect(stdout.code, stdout.stderr).toBe(0);
    const lines = stdout.stdout
      .trim()
      .split('\n')
      .map((line) => JSON.parse(line));
    expect(lines[0]).toMatchObject({ kind: 'conversation', conversationId: 'doomed' });
    expect(new Set(lines.map((l) => l.kind))).toEqual(new Set(['conversation', 'live_message', 'summary', 'segment', 'archived_message']));
    const out = path.join(home, 'doomed.jsonl');
    const file = await runCli(['export', 'doomed', '--out', out, '--home', home]);
    expect(file.code, file.stderr).toBe(0);
    expect(file.stdout).toBe('');
    expect(file.stderr).toContain(`${lines.length} records written to ${out}`);
    const written = (await readFile(out, 'utf8')).trim().split('\n');
    expect(written.slice(1)).toEqual(stdout.stdout.trim().split('\n').slice(1));
    await rm(out);
    const unknown = await runCli(['export', 'nobody', '--home', home]);
    expect(unknown.code).toBe(0);
    expect(unknown.stderr).toContain('nothing stored for conversation "nobody"');
  });

  it('refuses to erase without --yes, saying what would go, and erases with it', async () => {
    const refused = await runCli(['erase', 'doomed', '--home', home]);
    expect(refused.code).toBe(1);
    expect(refused.stderr).toMatch(
      /refusing without --yes\. This would permanently remove conversation doomed from both stores: \d+ live rows, \d+ summary batches, \d+ transcript segments/,
    );
    expect(refused.stderr).toContain('Run again with --yes');
    expect((await runCli(['list', '--json', '--home', home])).stdout).toContain('"doomed"');

    const erased = await runCli(['erase', 'doomed', '--yes', '--home', home]);
    expect(erased.code, erased.stderr).toBe(0);
    expect(erased.stdout).toMatch(/^erased conversation doomed: \d+ archive entries/);
    expect(JSON.parse((await runCli(['list', '--json', '--home', home])).stdout).map((c: { id: string }) => c.id)).toEqual(['kept']);
    expect(await filesContaining(path.join(home, 'lancedb'), [marker])).toEqual([]);
    const again = await runCli(['erase', 'doomed', '--yes', '--json', '--home', home]);
    expect(again.code).toBe(0);
    expect(JSON.parse(again.stdout)).toEqual({ status: 'not_found', conversationId: 'doomed' });
  });

  it('names the argument it misses', async () => {
    const missing = await runCli(['erase', '--yes', '--home', home]);
    expect(missing.code).toBe(2);
    expect(missing.stderr).toMatch(/conversation/);
  });
});
