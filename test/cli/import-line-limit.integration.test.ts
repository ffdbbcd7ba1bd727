/**
 * `memfold import` reads a line at most twice MEMFOLD_MAX_MESSAGE_BYTES plus 64 KiB long: a file without line
 * breaks (`/dev/zero`) or with one over-long line is refused with one line naming the line number, exit 1 (bad file
 * content, like a line that is not JSON), and nothing is written; no stack trace, no memory filled.
 */
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { copyPgliteTemplateTo } from '../support/backends.js';
import { runCli } from '../support/run-cli.js';

let home: string;
/** 2 * 1,024 + 64 KiB bytes a line. */
const env = { MEMFOLD_MAX_MESSAGE_BYTES: '1024' };

beforeAll(async () => {
  home = await mkdtemp(path.join(os.tmpdir(), 'memfold-import-limit-'));
  copyPgliteTemplateTo(path.join(home, 'pg'));
});
afterAll(() => rm(home, { recursive: true, force: true }));

it.skipIf(process.platform === 'win32')('refuses /dev/zero at its first line, naming it and the setting', async () => {
  const result = await runCli(['import', '/dev/zero', '--conversation', 'c', '--home', home], { env });
  expect(result.code).toBe(1);
  expect(result.stderr).toBe(
    'memfold import: Invalid argument line 1: is longer than 67584 bytes (twice MEMFOLD_MAX_MESSAGE_BYTES plus 64 KiB): one JSON object a line, each on its own line\n',
  );
});

it('refuses a file whose third line is too long, naming line 3, and writes none of its lines', async () => {
  const file = path.join(home, 'long.jsonl');
  const line = (content: string) => JSON.stringify({ role: 'user', content });
  await writeFile(file, `${line('one')}\r\n\n${line('x'.repeat(70_000))}\n${line('four')}\n`);
  const result = await runCli(['import', file, '--conversation', 'c', '--home', home], { env });
  expect(result.code).toBe(1);
  expect(result.stderr).toMatch(/^memfold import: Invalid argument line 3: is longer than 67584 bytes/);
  const context = await runCli(['context', 'c', '--json', '--home', home], { env });
  expect(context.stdout).not.toContain('"one"');
});

it('imports lines within the limit, counting CRLF and lone CR breaks as readline did', async () => {
  const file = path.join(home, 'ok.jsonl');
  const line = (content: string) => JSON.stringify({ role: 'user', content });
  await writeFile(file, `${line('one')}\r\n${line('two')}\r${line('x'.repeat(1_000))}\n`);
  const result = await runCli(['import', file, '--conversation', 'ok', '--home', home], { env });
  expect(result.stderr).toBe('');
  expect(result.stdout).toBe('ok: 3 messages appended, 0 skipped (already imported)\n');
});
