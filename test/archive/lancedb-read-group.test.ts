/**
 * Read groups (`lancedb-read-group.ts`): a lone ask runs at once; the asks made while a group runs are answered
 * together by the next, each with its own result; a failed group fails each of its asks and not the next group.
 */
import { describe, expect, it } from 'vitest';
import { readGroups } from '../../src/archive/lancedb/lancedb-read-group.js';

function gatedRun() {
  const groups: number[][] = [];
  const gates: Array<() => void> = [];
  const run = async (asks: readonly number[]) => {
    groups.push([...asks]);
    await new Promise<void>((resolve) => gates.push(resolve));
    if (asks.includes(-1)) throw new Error('the query failed');
    return asks.map((n) => n * 10);
  };
  return { groups, gates, run };
}

describe('read groups', () => {
  it('answers the asks made while a group runs in one next group, each its own result', async () => {
    const { groups, gates, run } = gatedRun();
    const ask = readGroups(run);
    const first = ask(1);
    expect(groups).toEqual([[1]]);
    const rest = [ask(2), ask(3), ask(4)];
    expect(groups).toEqual([[1]]);
    gates.shift()!();
    expect(await first).toBe(10);
    expect(groups).toEqual([[1], [2, 3, 4]]);
    gates.shift()!();
    expect(await Promise.all(rest)).toEqual([20, 30, 40]);
  });

  it('fails every ask of a failed group, and runs the next', async () => {
    const { groups, gates, run } = gatedRun();
    const ask = readGroups(run);
    const first = ask(1);
    const failing = [ask(-1), ask(2)];
    gates.shift()!();
    await first;
    const later = ask(5);
    gates.shift()!();
    for (const f of failing) await expect(f).rejects.toThrow('the query failed');
    gates.shift()!();
    expect(await later).toBe(50);
    expect(groups).toEqual([[1], [-1, 2], [5]]);
  });
});
