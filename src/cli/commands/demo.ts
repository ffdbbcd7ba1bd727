/**
 * `memfold demo`: replays a generated multi-session conversation turn by turn with a small context
 * window, compacting whenever the trigger fires, then shows the context, the batch tree and three
 * memory_read searches for facts planted early on.
 */
import type { Memfold } from '../../memfold.js';
import { replayConversation, type ReplayStats } from '../../eval/replay.js';
import { buildBatchTree, depthCounts, formatBatchTree } from '../batch-tree.js';
import { DEMO_SYSTEM_PROMPT, generateDemoConversation, PLANTED_FACTS } from '../demo/demo-conversation.js';
import { formatContext, printJson, type Output } from '../output.js';
import { createProgressBar } from '../progress.js';

export interface DemoFlags {
  turns?: number;
  json?: boolean;
}

export async function runDemo(memfold: Memfold, flags: DemoFlags, output: Output): Promise<number> {
  const conversationId = `demo-${new Date().toISOString().replace(/[:.]/g, '-')}`;
  const turnsPerSession = flags.turns ? Math.max(4, Math.ceil(flags.turns / 12)) : undefined;
  const script = generateDemoConversation(turnsPerSession ? { turnsPerSession } : {});
  const { trigger, contextWindow } = memfold.compactor.settings;
  output.err(
    `memfold demo: ${script.length} messages over 12 sessions, context window ${contextWindow} tokens (compaction at ${trigger}), conversation ${conversationId}`,
  );

  await memfold.append(conversationId, [{ role: 'system', content: DEMO_SYSTEM_PROMPT, createdAt: script[0]!.createdAt! }]);
  const bar = createProgressBar('replaying', script.length);
  const note = (s: ReplayStats) => `${s.compactions} compactions, ${s.archivedMessages} messages archived`;
  const stats = await replayConversation(memfold, conversationId, script, { onProgress: (done, _total, s) => bar.update(done, note(s)) });
  bar.finish(note(stats));
  const failure = stats.failures[0];
  if (failure) throw new Error(`compaction failed (${failure.failureCode}): ${failure.error}`);
  const { compactions, archivedMessages: archived, contextTokens: tokens } = stats;

  const context = await memfold.context(conversationId);
  const batches = await memfold.archive.list({ conversationId, kind: 'summary' });
  const tool = memfold.memoryRead(conversationId);
  const searches = [];
  for (const fact of PLANTED_FACTS) {
    const result = await tool.execute({ query: fact.query, limit: 3 });
    searches.push({ ...fact, found: result.output.includes(fact.expect), output: result.output });
  }

  if (flags.json) {
    printJson(output, { conversationId, messages: script.length, compactions, archived, context, depths: depthCounts(batches), searches });
    return 0;
  }
  output.out(`\n=== The context the model sees now (${context.length} messages, ${tokens} tokens) ===\n`);
  output.out(formatContext(context));
  output.out(
    `\n=== Archived batches by depth (${depthCounts(batches)
      .map((d) => `depth ${d.depth}: ${d.batches}`)
      .join(', ')}) ===\n`,
  );
  output.out(formatBatchTree(buildBatchTree(batches)));
  output.out('\n=== memory_read: facts planted in the first sessions ===');
  for (const search of searches) {
    output.out(`\n> memory_read {"query": "${search.query}"}  (looking for "${search.expect}": ${search.found ? 'found' : 'NOT found'})`);
    output.out(showFact(search.output, search.expect));
  }
  output.out(`\nExplore it: memfold inspect ${conversationId} · memfold search "<words>" --conversation ${conversationId} · memfold context ${conversationId}`);
  return searches.every((s) => s.found) ? 0 : 1;
}

/** The hit that holds the fact: its heading and the lines with the fact in them. */
function showFact(output: string, fact: string): string {
  const hits = output.split(/\n\n(?=#\d+ )/);
  const hit = hits.find((h) => h.includes(fact));
  if (!hit) return hits.slice(0, 2).join('\n\n');
  const [heading, ...lines] = hit.split('\n');
  return [hits[0]!.split('\n')[0], heading, ...lines.filter((l) => l.includes(fact)).map((l) => `  ${l.trim()}`)].join('\n');
}
