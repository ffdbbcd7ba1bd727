/**
 * Passage headers: short by default (`shortHeaders`): no message count, one time when the passage's lines share it,
 * and the first line leaves its time to the header; otherwise the time span and the message count.
 */
import { describe, expect, it } from 'vitest';
import { createInMemoryArchive } from '../../src/archive/in-memory/in-memory-archive.js';
import { createMemoryReadTool } from '../../src/tools/memory-read.js';
import type { ReadStrategy } from '../../src/tools/memory-read-strategy.js';
import { message, minute, transcript } from '../archive/archive-fixtures.js';

async function answer(strategy: Partial<ReadStrategy>, sameTime: boolean): Promise<string> {
  const archive = createInMemoryArchive();
  const messages = Array.from({ length: 9 }, (_, i) => {
    const m = message('conv', i + 1, i === 4 ? 'I bought a lemon tree for the balcony.' : `Filler turn ${i + 1} about the weather.`);
    return sameTime ? { ...m, createdAt: minute(5) } : m;
  });
  await archive.write([transcript('conv', 'segment-0', messages)]);
  const { output } = await createMemoryReadTool(archive, 'conv', { strategy }).execute({ query: 'lemon tree' });
  return output;
}

async function headers(strategy: Partial<ReadStrategy>, sameTime: boolean): Promise<string[]> {
  return (await answer(strategy, sameTime)).split('\n').filter((line) => line.startsWith('#'));
}

/** The passage's first line, after its header. */
async function firstLine(strategy: Partial<ReadStrategy>): Promise<string> {
  const lines = (await answer(strategy, false)).split('\n');
  return lines[lines.findIndex((line) => line.startsWith('#1 ')) + 1]!;
}

describe('memory_read passage headers', () => {
  it('long: the time span and the message count', async () => {
    expect(await headers({ shortHeaders: false }, false)).toEqual(['#1 transcript | segment-0 | Wed 1 May 2024 10:03 .. 10:07 UTC | 5 messages']);
    expect(await headers({ shortHeaders: false }, true)).toEqual(['#1 transcript | segment-0 | Wed 1 May 2024 10:05 .. 10:05 UTC | 5 messages']);
  });

  it('short, the default: no count, and one time when the lines share it', async () => {
    expect(await headers({}, false)).toEqual(['#1 transcript | segment-0 | Wed 1 May 2024 10:03 .. 10:07 UTC']);
    expect(await headers({}, true)).toEqual(['#1 transcript | segment-0 | Wed 1 May 2024 10:05 UTC']);
    expect(await headers({ shortHeaders: true, spokenDates: false }, true)).toEqual(['#1 transcript | segment-0 | 2024-05-01T10:05:00.000Z']);
  });

  it('short: the first line leaves its time to the header, the next lines say theirs as before', async () => {
    expect(await firstLine({ shortHeaders: false })).toBe('  [2024-05-01 10:03] user: Filler turn 3 about the weather.');
    expect(await firstLine({})).toBe('  user: Filler turn 3 about the weather.');
    expect(await answer({}, false)).toContain('\n  [2024-05-01 10:04] user: Filler turn 4 about the weather.\n');
  });
});
