/**
 * The kept first turns of a history that had nothing archived (no clip-archive) are its opening turns whatever its
 * seqs: a store of the caller's own may number messages with gaps (a shared sequence, rows it deleted). Only once
 * a clip-archive shows that messages were archived does a hole between seqs mean archived messages.
 */
import { describe, expect, it } from 'vitest';
import { resolveCompactionSettings } from '../../src/compaction/compaction-settings.js';
import { planCompaction } from '../../src/compaction/plan/plan.js';
import type { ConversationMessage } from '../../src/conversation/types.js';
import { chars4, msg, toolTurn } from '../support/messages.js';

const settings = resolveCompactionSettings({ contextWindow: 2_000, keepRecentTokens: 100, keepRecentMessages: 2, keepFirstTurns: 1 });

/** Eight tool turns after a system prompt. */
const messages = [msg('system', 'you track crates'), ...Array.from({ length: 8 }, (_, n) => toolTurn(n)).flat()];

/** The same messages numbered `seqOf(i)` for the i-th. */
function history(seqOf: (index: number) => number): ConversationMessage[] {
  return messages.map((m, i) => ({ ...m, seq: seqOf(i) }));
}

describe('first turns of a history numbered with gaps of its own', () => {
  it('keeps the whole first turn, as when numbered 1, 2, 3', () => {
    const contiguous = planCompaction(
      history((i) => i + 1),
      settings,
      chars4,
      { force: true },
    );
    const gapped = planCompaction(
      history((i) => 10 * (i + 1)),
      settings,
      chars4,
      { force: true },
    );
    expect(contiguous.kind).toBe('compact');
    expect(gapped.kind).toBe('compact');
    if (contiguous.kind !== 'compact' || gapped.kind !== 'compact') return;
    // The opening turn: the question, the call, its result and the answer.
    expect(contiguous.firstTurns.map((m) => m.role)).toEqual(['user', 'assistant', 'tool', 'assistant']);
    expect(gapped.firstTurns.map((m) => m.id)).toEqual(contiguous.firstTurns.map((m) => m.id));
    expect(gapped.compactable.map((m) => m.id)).toEqual(contiguous.compactable.map((m) => m.id));
  });

  it('with a clip-archive, a hole inside the first turn still ends the opening there', () => {
    const clip: ConversationMessage = { ...msg('system', '[Context Summary: archived batches, oldest first]'), seq: 0, kind: 'clip_archive' };
    // The first turn's call and result (seqs 3 and 4) were archived: its answer is the live rest of a split turn.
    const rows = history((i) => i + 1).filter((m) => m.seq !== 3 && m.seq !== 4);
    const planned = planCompaction([clip, ...rows], settings, chars4, { force: true });
    expect(planned.kind).toBe('compact');
    if (planned.kind !== 'compact') return;
    expect(planned.firstTurns.map((m) => m.seq)).toEqual([2]);
  });
});
