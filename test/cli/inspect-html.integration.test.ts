/**
 * `memfold inspect <conversation> --html <file>` end to end: a conversation compacted into depths 0 and 1 through
 * createMemfold on a PGlite home, the page written by the CLI, then opened in headless Chromium. The page must load
 * nothing but itself, raise no error, draw one box per batch, show a batch's summary and transcript (a message
 * holding `</script>` as text), and navigate from a depth-1 batch to a child. The screenshot is kept in
 * test-artifacts/; MEMFOLD_UPDATE_SCREENSHOT=1 also refreshes docs/inspect-timeline.png, the README's copy.
 */
import { existsSync } from 'node:fs';
import { copyFile, mkdir, mkdtemp, readFile, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { chromium, type Browser } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { generateDemoConversation } from '../../src/cli/demo/demo-conversation.js';
import type { ArchiveEntry } from '../../src/conversation/types.js';
import { replayConversation } from '../../src/eval/replay.js';
import { createMemfold } from '../../src/memfold.js';
import { copyPgliteTemplateTo } from '../support/backends.js';
import { runCli } from '../support/run-cli.js';

const CHROMIUM = '/usr/bin/chromium';
const ROOT = new URL('../../', import.meta.url);
const HOSTILE = 'Gate note </script><script>window.pwned = 1</script><b>bold?</b> the gate code is 7351.';
/** CI must run this suite (a missing browser fails it there); elsewhere a machine without Chromium skips it. */
const skipWithoutChromium = !existsSync(CHROMIUM) && process.env.CI !== 'true';

let home: string;
let summaries: ArchiveEntry[];
let hostileBatch: string;
let browser: Browser | undefined;

beforeAll(async () => {
  if (skipWithoutChromium) return;
  home = await mkdtemp(path.join(os.tmpdir(), 'memfold-inspect-html-'));
  copyPgliteTemplateTo(path.join(home, 'pg'));
  // The demo's conversation at the demo's window folds into several depth-0 batches and two of depth 1.
  const memfold = await createMemfold({ env: {}, config: { home }, compaction: { contextWindow: 4_096 } });
  try {
    const script = generateDemoConversation({ turnsPerSession: 30 });
    const at = script.findIndex((m, i) => i > 100 && m.role === 'user');
    script[at] = { ...script[at]!, content: HOSTILE };
    const stats = await replayConversation(memfold, 'ops', script);
    expect(stats.failures).toEqual([]);
    summaries = await memfold.archive.list({ conversationId: 'ops', kind: 'summary' });
    const transcripts = await memfold.archive.list({ conversationId: 'ops', kind: 'transcript' });
    hostileBatch = transcripts.find((t) => t.messages?.some((m) => m.content === HOSTILE))!.parentLabel!;
  } finally {
    await memfold.close();
  }
  expect(new Set(summaries.map((b) => b.depth))).toEqual(new Set([0, 1]));
  browser = await chromium.launch({ executablePath: CHROMIUM, args: ['--headless', '--no-sandbox', '--disable-gpu'] });
}, 180_000);

afterAll(async () => {
  await browser?.close();
  if (home) await rm(home, { recursive: true, force: true });
});

describe.skipIf(skipWithoutChromium)(
  `inspect --html in Chromium${skipWithoutChromium ? ` (skipped: no Chromium at ${CHROMIUM}; apt-get install chromium)` : ''}`,
  () => {
    it('writes one page that loads only itself, shows every batch, and opens and navigates batches', async () => {
      expect(existsSync(CHROMIUM), `Chromium is required at ${CHROMIUM}`).toBe(true);
      const file = path.join(home, 'timeline.html');
      const written = await runCli(['inspect', 'ops', '--html', file, '--home', home]);
      expect(written.code, written.stderr).toBe(0);
      expect(written.stderr).toBe('');
      expect(written.stdout.trim()).toBe(`wrote ${file}: ${summaries.length} batches of conversation ops`);
      expect(await readFile(file, 'utf8')).not.toContain(HOSTILE);

      const page = await browser!.newPage({ viewport: { width: 1280, height: 860 } });
      const errors: string[] = [];
      const requests: string[] = [];
      page.on('console', (message) => void (message.type() === 'error' && errors.push(message.text())));
      page.on('pageerror', (error) => void errors.push(error.message));
      page.on('request', (request) => void requests.push(request.url()));
      const url = pathToFileURL(file).href;
      await page.goto(url);

      await expect.poll(() => page.locator('.batch').count()).toBe(summaries.length);
      for (const depth of [0, 1]) expect(await page.locator(`.batch[data-depth="${depth}"]`).count()).toBe(summaries.filter((b) => b.depth === depth).length);

      // A depth-0 batch: its summary and its transcript, the hostile message shown as text and never run.
      const batch = summaries.find((b) => b.label === hostileBatch)!;
      await page.locator(`.batch[data-label="${hostileBatch}"]`).click();
      const panel = page.locator('#panel');
      await expect.poll(() => panel.isVisible()).toBe(true);
      expect(await panel.locator('.summary').textContent()).toBe(batch.content.slice(batch.content.indexOf('\n') + 1));
      expect(await panel.locator('.message .text', { hasText: 'gate code is 7351' }).textContent()).toBe(HOSTILE);
      expect(await page.evaluate(() => (globalThis as { pwned?: number }).pwned)).toBeUndefined();
      expect(await panel.locator('script, b').count()).toBe(0);

      // A depth-1 batch lists its children; clicking one opens that batch.
      const parent = summaries.find((b) => b.depth === 1)!;
      await page.locator(`.batch[data-label="${parent.label}"]`).click();
      expect(await panel.locator('h3', { hasText: 'Covers' }).textContent()).toBe(`Covers (${parent.sourceIds.length} batches)`);
      await panel.locator('.child').first().click();
      const child = summaries.filter((b) => parent.sourceIds.includes(b.label)).sort((a, b) => a.start.localeCompare(b.start))[0]!;
      expect(await panel.locator('.panel-head code').textContent()).toBe(child.label);
      expect(await page.locator('.batch.selected').getAttribute('data-label')).toBe(child.label);
      expect(await panel.locator('.message').count()).toBe(child.count);

      const artifact = new URL('test-artifacts/inspect-timeline.png', ROOT).pathname;
      await mkdir(path.dirname(artifact), { recursive: true });
      await page.screenshot({ path: artifact, fullPage: true });
      if (process.env.MEMFOLD_UPDATE_SCREENSHOT === '1') {
        await mkdir(new URL('docs/', ROOT), { recursive: true });
        await copyFile(artifact, new URL('docs/inspect-timeline.png', ROOT));
      }
      await page.close();
      expect(errors).toEqual([]);
      expect([...new Set(requests)]).toEqual([url]);
    });
  },
);
