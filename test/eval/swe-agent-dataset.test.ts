/** The SWE-agent loader: `.traj` histories as agentic runs that append cleanly, the agent's own calls as the tracked actions. */
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { loadSweAgentRuns, sweAgentMessages } from '../../src/eval/datasets/swe-agent.js';
import { toolPairs, valuesFromToolOutputs } from '../../src/eval/agentic-metrics.js';
import { createMemfold } from '../../src/memfold.js';

const FIXTURE = new URL('../fixtures/swe-agent/function-calling-simple.traj', import.meta.url).pathname;

describe('SWE-agent trajectories', () => {
  it('loads a trajectory as messages a store accepts, each tool result answering its call', async () => {
    const [run] = await loadSweAgentRuns(FIXTURE);
    expect(run!.id).toBe('function-calling-simple');
    expect(run!.messages.map((m) => m.role)).toEqual(['system', 'user', ...Array(5).fill(['assistant', 'tool']).flat()]);
    expect(toolPairs(run!.messages)).toHaveLength(5);
    expect(run!.actions.map((a) => a.name)).toEqual(run!.messages.flatMap((m) => (m.toolCalls ?? []).map((c) => c.function.name)));
    // Values the agent reused after reading them in a tool output are what the eval tracks.
    expect(valuesFromToolOutputs(run!.actions, run!.messages).every((v) => run!.messages[v.firstSeenAt]!.role === 'tool')).toBe(true);
    const memfold = await createMemfold({ store: 'memory', env: {} });
    expect(await memfold.append(run!.id, run!.messages)).toHaveLength(run!.messages.length);
    await memfold.close();
  });

  it('reads every .traj of a folder in name order, and names the field of a bad message', async () => {
    const dir = await mkdtemp(path.join(os.tmpdir(), 'memfold-swe-'));
    try {
      await expect(loadSweAgentRuns(dir)).rejects.toMatchObject({ field: 'file' });
      const history = [
        { role: 'user', content: [{ type: 'text', text: 'fix it' }] },
        { role: 'assistant', content: 'look', tool_calls: [{ id: 'c1', type: 'function', function: { name: 'open', arguments: '{"path":"a.py"}' } }] },
        { role: 'tool', content: 'a.py: 10 lines', tool_call_ids: ['c1'] },
      ];
      await writeFile(path.join(dir, 'b.traj'), JSON.stringify({ history }));
      await writeFile(path.join(dir, 'a.traj'), JSON.stringify({ history }));
      await writeFile(path.join(dir, 'notes.txt'), 'not a trajectory');
      const runs = await loadSweAgentRuns(dir);
      expect(runs.map((r) => r.id)).toEqual(['a', 'b']);
      expect(runs[0]!.messages[0]!.content).toBe('fix it');
      expect(runs[0]!.actions).toEqual([{ name: 'open', kwargs: { path: 'a.py' } }]);
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
    expect(() => sweAgentMessages([{ role: 'tool', content: 'x', tool_call_ids: ['a', 'b'] }], 'bad')).toThrow(
      expect.objectContaining({ field: 'bad.history[0].tool_call_ids' }),
    );
    expect(() => sweAgentMessages([{ role: 'robot' as never, content: 'x' }], 'bad')).toThrow(expect.objectContaining({ field: 'bad.history[0].role' }));
  });
});
