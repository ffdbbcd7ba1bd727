/**
 * What keeps an assistant's prompt cache warm: between two compactions the context only grows at its end (the
 * system prompt, the clip-archive, the kept turns and every message already shown stay byte for byte as they
 * were), and a compaction keeps the system prompt in front.
 */
import { describe, expect, it } from 'vitest';
import type { ConversationMessage } from '../../src/conversation/types.js';
import { sameMessage } from '../../src/eval/cache-reuse.js';
import { loadTauBench } from '../../src/eval/datasets/tau-bench.js';
import { createMemfold } from '../../src/memfold.js';
import { TAU_BENCH_EXCERPT } from '../support/shared-data.js';

const isPrefix = (shorter: readonly ConversationMessage[], longer: readonly ConversationMessage[]) =>
  shorter.length <= longer.length && shorter.every((m, i) => sameMessage(m, longer[i]!));

describe('the context between compactions', () => {
  it('only grows at its end, so each request shares every earlier message with the one before it', async () => {
    const runs = await loadTauBench(TAU_BENCH_EXCERPT);
    const memfold = await createMemfold({ store: 'memory', env: {}, compaction: { contextWindow: 3_000, keepRecentMessages: 2, toolOutputMaxLines: 2 } });
    try {
      let compactions = 0;
      let comparedAcrossTurns = 0;
      for (const run of runs) {
        const id = `tau-${run.taskId}-${run.messages.length}`;
        let previous: ConversationMessage[] | undefined;
        let compactedSince = false;
        for (const message of run.messages) {
          if (message.role === 'assistant') {
            // The prompt as an assistant would send it: context() read fresh from the store each time.
            const prompt = await memfold.context(id);
            if (previous && !compactedSince) {
              expect(isPrefix(previous, prompt), `request before message ${run.messages.indexOf(message)} of ${id}`).toBe(true);
              comparedAcrossTurns++;
            }
            if (previous && compactedSince) {
              expect(prompt[0]).toEqual(previous[0]);
              expect(prompt[1]).toMatchObject({ kind: 'clip_archive' });
            }
            previous = prompt;
            compactedSince = false;
          }
          await memfold.append(id, [message]);
          if (message.toolCalls?.length) continue; // never compact between a call and its results
          const result = await memfold.compact(id);
          expect(result.status, result.error).not.toBe('failed');
          if (result.status === 'compacted') {
            compactions++;
            compactedSince = true;
          }
        }
      }
      expect(compactions).toBeGreaterThanOrEqual(3);
      expect(comparedAcrossTurns).toBeGreaterThan(20);
    } finally {
      await memfold.close();
    }
  });
});
