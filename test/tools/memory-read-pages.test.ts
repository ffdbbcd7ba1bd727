/**
 * The second look: an answer that leaves matching messages out for its budget names the call that shows the next
 * best (`page`), each page within the budget, no message shown on two pages, every match reached page by page.
 */
import { describe, expect, it } from 'vitest';
import { createInMemoryArchive } from '../../src/archive/in-memory/in-memory-archive.js';
import { createMemoryReadTool } from '../../src/tools/memory-read.js';
import { suggestedNextCall } from '../../src/eval/second-look.js';
import { message, transcript } from '../archive/archive-fixtures.js';

const tokens = (text: string) => Math.ceil(text.length / 4);
const PLANT = (i: number) => `Day ${i}: I bought a new plant for the balcony, plant number ${i}, a small one from the market.`;
const FILLER = (i: number) => `Filler turn ${i}: we chatted about the weather and the traffic on the way home.`;

async function archiveWithPlants(): Promise<ReturnType<typeof createInMemoryArchive>> {
  const archive = createInMemoryArchive();
  const messages = Array.from({ length: 120 }, (_, i) =>
    message('conv', i + 1, i % 4 === 0 ? PLANT(i + 1) : FILLER(i + 1), i % 2 === 0 ? 'user' : 'assistant'),
  );
  await archive.write([0, 40, 80].map((from, k) => transcript('conv', `segment-${k}`, messages.slice(from, from + 40), { parentLabel: `batch-${k}` })));
  return archive;
}

const plantsIn = (output: string) => [...output.matchAll(/plant number (\d+),/g)].map((m) => Number(m[1]));

describe('memory_read pages', () => {
  it('names the next page when matches are left out, and each page shows new ones within the budget', async () => {
    const tool = createMemoryReadTool(await archiveWithPlants(), 'conv');
    const query = 'which plant did I buy';
    const seen: number[] = [];
    let args: Record<string, unknown> | undefined = { query, max_tokens: 400 };
    let pages = 0;
    while (args !== undefined && pages < 20) {
      const { ok, output } = await tool.execute(args);
      expect(ok).toBe(true);
      expect(tokens(output)).toBeLessThanOrEqual(400);
      const shown = plantsIn(output);
      expect(shown.some((n) => seen.includes(n))).toBe(false);
      seen.push(...shown);
      pages++;
      args = suggestedNextCall(output);
      if (args !== undefined) expect(args).toEqual({ query, max_tokens: 400, page: pages + 1 });
    }
    expect(pages).toBeGreaterThan(2);
    expect(seen.sort((a, b) => a - b)).toEqual(Array.from({ length: 30 }, (_, i) => 4 * i + 1));
  });

  it('shows every match on exactly one page whatever the budget, each page planned after the earlier ones as they were shown', async () => {
    // Matches of uneven lengths: a smaller budget can pick other windows than a larger one, so an earlier page
    // planned again under a later page's framing would differ from the page shown and hide a match from every page.
    const archive = createInMemoryArchive();
    const uneven = (i: number) => `${PLANT(i)}${' It was green.'.repeat((((i - 1) * 7) % 5) * 3)}`;
    const messages = Array.from({ length: 24 }, (_, i) =>
      message('conv', i + 1, i % 4 === 0 ? uneven(i + 1) : FILLER(i + 1), i % 2 === 0 ? 'user' : 'assistant'),
    );
    await archive.write([transcript('conv', 'segment-0', messages)]);
    const tool = createMemoryReadTool(archive, 'conv');
    const failures: string[] = [];
    for (let maxTokens = 300; maxTokens <= 700; maxTokens += 3) {
      const seen: number[] = [];
      let args: Record<string, unknown> | undefined = { query: 'which plant did I buy', max_tokens: maxTokens };
      for (let pages = 0; args !== undefined && pages < 20; pages++) {
        const { output } = await tool.execute(args);
        seen.push(...plantsIn(output));
        args = suggestedNextCall(output);
      }
      const sorted = seen.sort((a, b) => a - b).join(',');
      if (sorted !== '1,5,9,13,17,21') failures.push(`max_tokens ${maxTokens}: ${sorted}`);
    }
    expect(failures).toEqual([]);
  });

  it('says when what is left does not fit a page, rather than that the earlier pages showed it all', async () => {
    const archive = createInMemoryArchive();
    const long = (i: number) => `${PLANT(i)}${' It was green.'.repeat(8)}`;
    const messages = Array.from({ length: 12 }, (_, i) =>
      message('conv', i + 1, i % 4 === 0 ? long(i + 1) : FILLER(i + 1), i % 2 === 0 ? 'user' : 'assistant'),
    );
    await archive.write([transcript('conv', 'segment-0', messages)]);
    const tool = createMemoryReadTool(archive, 'conv');
    const first = await tool.execute({ query: 'which plant did I buy', max_tokens: 200 });
    expect(plantsIn(first.output)).toHaveLength(1);
    const { output } = await tool.execute(suggestedNextCall(first.output)!);
    expect(output).toMatch(/^No more archived messages for "which plant did I buy" fit this page: \d+ matching messages .* larger max_tokens/);
  });

  it('says when a page lies past the last match', async () => {
    const tool = createMemoryReadTool(await archiveWithPlants(), 'conv');
    const { ok, output } = await tool.execute({ query: 'which plant did I buy', page: 20 });
    expect(ok).toBe(true);
    expect(output).toMatch(/^No more archived messages match "which plant did I buy": the earlier pages showed them all\.$/);
  });

  it('refuses a page without a query, naming the argument', async () => {
    const tool = createMemoryReadTool(await archiveWithPlants(), 'conv');
    const { ok, output } = await tool.execute({ label: 'segment-0', page: 2 });
    expect(ok).toBe(false);
    expect(output).toMatch(/page/);
  });
});

describe('suggestedNextCall', () => {
  it('reads the call an answer names, and nothing from an answer that names none', () => {
    expect(suggestedNextCall('Left out … Read the next best with {"query":"x","page":2}, one in full with {"label": "<label>"}')).toEqual({
      query: 'x',
      page: 2,
    });
    expect(suggestedNextCall('Left out … Read one in full with {"label": "<label>"}')).toBeUndefined();
    expect(suggestedNextCall('Read the next best with {not json}, one in full')).toBeUndefined();
  });
});

describe('candidates by what the question asks', () => {
  it('a count or a recommendation draws the broader candidate set; a plain question the narrower one', async () => {
    const archive = await archiveWithPlants();
    const limits: number[] = [];
    const recording = { ...archive, search: (query: Parameters<typeof archive.search>[0]) => (limits.push(query.limit ?? 0), archive.search(query)) };
    const tool = createMemoryReadTool(recording, 'conv', { strategy: { candidateSegments: 7, aggregateCandidates: 13 } });
    const firstLimit = async (query: string) => {
      limits.length = 0;
      await tool.execute({ query });
      return limits[0];
    };
    expect(await firstLimit('How many plants did I buy?')).toBe(13);
    expect(await firstLimit('Can you recommend a plant for my balcony?')).toBe(13);
    expect(await firstLimit('Where did I buy the plant?')).toBe(7);
  });
});
