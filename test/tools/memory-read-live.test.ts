/**
 * memory_read beside the live history: a search shows matching messages still in the context (labelled `live
 * history`) as well as archived ones, archived first when they match as well, within from/to; the clip-archive and
 * notes are never shown as live messages. Through `memfold.memoryRead`, which passes the live rows.
 */
import { describe, expect, it } from 'vitest';
import { createInMemoryArchive } from '../../src/archive/in-memory/in-memory-archive.js';
import type { ConversationMessage } from '../../src/conversation/types.js';
import { createMemfold } from '../../src/memfold.js';
import { createTokenCounter } from '../../src/tokens/create-token-counter.js';
import { createMemoryReadTool } from '../../src/tools/memory-read.js';
import { message, transcript } from '../archive/archive-fixtures.js';

const FILLER = (i: number) => `Filler turn ${i}: we chatted about the weather and the traffic on the way home.`;

describe('memory_read and the live history', () => {
  it('memfold.memoryRead finds a message still in the context, where the archive alone found nothing', async () => {
    const memfold = await createMemfold({ store: 'memory', env: {}, tokens: createTokenCounter({ mode: 'chars4' }) });
    try {
      await memfold.append('c', [
        { role: 'user', content: 'My sister Ines gave me a fig tree for my birthday.' },
        { role: 'assistant', content: 'What a lovely present.' },
      ]);
      const { ok, output } = await memfold.memoryRead('c').execute({ query: 'Who gave me the fig tree?' });
      expect(ok).toBe(true);
      expect(output).toMatch(/^#1 transcript \| live history \| /m);
      expect(output).toContain('My sister Ines gave me a fig tree for my birthday.');
    } finally {
      await memfold.close();
    }
  });

  it('ranks archived matches before live ones of the same strength, and keeps the live ones within from/to', async () => {
    const archive = createInMemoryArchive();
    const archived = Array.from({ length: 20 }, (_, i) => message('c', i + 1, i === 10 ? 'I planted a fig tree in the garden.' : FILLER(i + 1)));
    await archive.write([transcript('c', 'segment-0', archived, { parentLabel: 'batch-0' })]);
    const live: ConversationMessage[] = [
      { ...message('c', 40, 'Summary of earlier turns: a fig tree was planted.'), kind: 'clip_archive', role: 'system' },
      ...Array.from({ length: 20 }, (_, i) => message('c', 41 + i, i === 5 ? 'I planted a fig tree in the garden.' : FILLER(41 + i))),
    ];
    const tool = createMemoryReadTool(archive, 'c', { live: async () => live });
    const { output } = await tool.execute({ query: 'fig tree planted garden' });
    const first = output.indexOf('#1 transcript | segment-0 |');
    const second = output.indexOf('#2 transcript | live history |');
    expect(first).toBeGreaterThan(0);
    expect(second).toBeGreaterThan(first);
    expect(output).not.toContain('Summary of earlier turns');
    // Before the live messages' time: the archived passage alone.
    const early = await tool.execute({ query: 'fig tree planted garden', to: archived[19]!.createdAt });
    expect(early.output).toContain('segment-0');
    expect(early.output).not.toContain('live history');
  });
});
