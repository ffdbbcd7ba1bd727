/**
 * `memfold usage` and `memfold resume` through the CLI's `main` on an embedded home: the count and the next step
 * as text and JSON, the loop guard's stored pause shown and lifted, and usage as a read command (no store made).
 * Also `memfold compact` naming the tier that resolved a tool-heavy conversation.
 */
import { existsSync } from 'node:fs';
import path from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { resolveCompactionSettings } from '../../src/compaction/compaction-settings.js';
import type { NewMessage } from '../../src/conversation/types.js';
import { createKyselyPersistence } from '../../src/persistence/kysely/kysely-store.js';
import type { PersistenceProvider } from '../../src/persistence/persistence-provider.js';
import { copyPgliteTemplateTo } from '../support/backends.js';
import { runCli } from '../support/run-cli.js';
import { fileCleanups } from '../support/cleanups.js';

const cleanups = fileCleanups();
const tempDir = cleanups.tempDir;

function turns(count: number, words: number): NewMessage[] {
  return Array.from({ length: count }, (_, i) => ({
    role: i % 2 === 0 ? 'user' : 'assistant',
    content: `turn ${i}: ${'a sentence about the heron colony '.repeat(words)}`,
    createdAt: new Date(Date.UTC(2024, 4, 1, 9, i)).toISOString(),
  }));
}

/** Tool-heavy turns: a question, a call, a 400-token output, an answer. */
function toolTurns(count: number): NewMessage[] {
  return Array.from({ length: count }, (_, n) => {
    const at = (k: number) => new Date(Date.UTC(2024, 4, 2, 9, 4 * n + k)).toISOString();
    return [
      { role: 'user' as const, content: `stock of item ${n}?`, createdAt: at(0) },
      {
        role: 'assistant' as const,
        content: '',
        toolCalls: [{ id: `call_${n}`, type: 'function' as const, function: { name: 'inventory', arguments: '{}' } }],
        createdAt: at(1),
      },
      { role: 'tool' as const, toolCallId: `call_${n}`, content: `SKU-${n}: ${'aisle shelf bin '.repeat(100)}`, createdAt: at(2) },
      { role: 'assistant' as const, content: `item ${n} is in stock`, createdAt: at(3) },
    ];
  }).flat();
}

describe('memfold usage and resume', () => {
  let home: string;
  const withStore = async <T>(fn: (store: PersistenceProvider) => Promise<T>): Promise<T> => {
    const store = await createKyselyPersistence({ dialect: 'pglite', dataDir: path.join(home, 'pg') });
    try {
      return await fn(store);
    } finally {
      await store.close();
    }
  };

  beforeAll(async () => {
    home = await tempDir('memfold-usage-');
    copyPgliteTemplateTo(path.join(home, 'pg'));
    await withStore(async (store) => {
      await store.append('short', turns(2, 2));
      await store.append('long', turns(40, 6));
      await store.append('tools', toolTurns(40));
    });
  });

  it('says when clearing old tool outputs is the next step, and compact names the tier that resolved it', async () => {
    const usage = await runCli(['usage', 'tools', '--window', '16000', '--home', home]);
    expect(usage.code, usage.stderr).toBe(0);
    expect(usage.stdout).toContain('next compaction: clear tool outputs: over the trigger');
    const compact = await runCli(['compact', 'tools', '--window', '16000', '--home', home]);
    expect(compact.code, compact.stderr).toBe(0);
    expect(compact.stdout).toMatch(
      /^compacted by tier 2: \d+ old tool outputs cleared \(archived verbatim; placeholders naming their labels in the context, \d+ tokens freed\); tokens \d+ -> \d+; no summary needed$/m,
    );
  });

  it('prints the tokens against the window, the trigger, target and warning mark, and the next step', async () => {
    const short = await runCli(['usage', 'short', '--home', home]);
    expect(short.code, short.stderr).toBe(0);
    expect(short.stdout).toMatch(/^conversation short: \d+ tokens of a 128000-token window \(0\.\d%\)$/m);
    const defaults = resolveCompactionSettings();
    const percent = (tokens: number) => `${Math.round((tokens / defaults.contextWindow) * 100)}%`;
    expect(short.stdout).toContain(
      `trigger ${defaults.trigger} (${percent(defaults.trigger)}), target ${defaults.targetTokens} (${percent(defaults.targetTokens)}), warning at 89600 (70%)`,
    );
    expect(short.stdout).toContain('next compaction: none: below the trigger');

    const long = await runCli(['usage', 'long', '--window', '2000', '--json', '--home', home]);
    expect(long.code, long.stderr).toBe(0);
    const usage = JSON.parse(long.stdout);
    const small = resolveCompactionSettings({ contextWindow: 2000 });
    expect(usage).toMatchObject({
      conversationId: 'long',
      contextWindow: 2000,
      trigger: small.trigger,
      targetTokens: small.targetTokens,
      warnAt: 0.7,
      warnTokens: 1400,
      next: 'compact',
    });
    expect(usage.tokens).toBeGreaterThan(1600);
    expect(usage.percent).toBeCloseTo((usage.tokens / 2000) * 100, 10);
  });

  it('shows a stored pause, which resume lifts and reports', async () => {
    await withStore((store) => store.setLoopGuardState('long', { streak: 2, trigger: 1600, paused: true }));
    const paused = await runCli(['usage', 'long', '--window', '2000', '--home', home]);
    expect(paused.stdout).toContain('next compaction: skip (paused): the loop guard paused automatic compaction; `memfold resume long` lifts it');
    const compact = await runCli(['compact', 'long', '--window', '2000', '--home', home]);
    expect(compact.stdout).toContain('skipped: automatic compaction is paused');
    expect(compact.stdout).toContain('`memfold resume long`');

    const resumed = await runCli(['resume', 'long', '--home', home]);
    expect(resumed.code, resumed.stderr).toBe(0);
    expect(resumed.stdout).toMatch(/^resumed: automatic compaction of conversation long runs again \(paused since \S+, trigger 1600 tokens\)$/m);
    expect(await withStore((store) => store.getLoopGuardState('long'))).toBeUndefined();
    expect(JSON.parse((await runCli(['usage', 'long', '--window', '2000', '--json', '--home', home])).stdout).next).toBe('compact');

    const again = await runCli(['resume', 'long', '--json', '--home', home]);
    expect(JSON.parse(again.stdout)).toEqual({ conversationId: 'long', cleared: null });
  });

  it('is a read command: a home without a store is refused and nothing is created; an empty id exits 2', async () => {
    const fresh = path.join(await tempDir('memfold-usage-none-'), 'home');
    const none = await runCli(['usage', 'c1', '--home', fresh]);
    expect(none.code).toBe(2);
    expect(none.stderr).toContain('no store at');
    expect(existsSync(fresh)).toBe(false);
    const empty = await runCli(['usage', '', '--home', home]);
    expect(empty.code).toBe(2);
    expect(empty.stderr).toContain('Invalid argument <conversation>: is required: memfold usage <conversation>');
  });
});
