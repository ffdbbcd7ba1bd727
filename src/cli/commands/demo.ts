/**
 * `memfold demo`: replays a generated multi-session conversation turn by turn with a small context
 * window, compacting whenever the trigger fires, then shows the context, the batch tree and three
 * memory_read searches for facts planted early on.
 */
import type { ConversationMessage } from '../../agent/types.js';
import type { Memfold } from '../../memfold.js';
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
  output.err(`memfold demo: ${script.length} messages over 12 sessions, context window ${contextWindow} tokens (compaction at ${trigger}), conversation ${conversationId}`);

  let live: ConversationMessage[] = await memfold.append(conversationId, [{ role: 'system', content: DEMO_SYSTEM_PROMPT, createdAt: script[0]!.createdAt! }]);
  let tokens = live.reduce((sum, m) => sum + memfold.tokens.countMessage(m), 0);
  let compactions = 0;
  let archived = 0;
  const bar = createProgressBar('replaying', script.length);
  for (let i = 0; i < script.length; i++) {
    const [stored] = await memfold.append(conversationId, [script[i]!]);
    live.push(stored!);
    tokens += memfold.tokens.countMessage(stored!);
    // Compact at a unit boundary: never while a tool call waits for its result.
    const waitsForResult = (stored!.toolCalls?.length ?? 0) > 0;
    if (tokens >= trigger && !waitsForResult) {
      const result = await memfold.compact(conversationId);
      if (result.failed) throw new Error(`compaction failed (${result.failureCode}): ${result.error}`);
      if (result.compacted) {
        compactions++;
        archived += result.archivedMessages;
        live = result.history;
        tokens = result.tokensAfter;
      }
    }
    bar.update(i + 1, `${compactions} compactions, ${archived} messages archived`);
  }
  bar.finish(`${compactions} compactions, ${archived} messages archived`);

  const context = await memfold.context(conversationId);
  const batches = await memfold.memory.list({ conversationId, kind: 'summary' });
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
  output.out(`\n=== Archived batches by depth (${depthCounts(batches).map((d) => `depth ${d.depth}: ${d.batches}`).join(', ')}) ===\n`);
  output.out(formatBatchTree(buildBatchTree(batches)));
  output.out('\n=== memory_read: facts planted in the first sessions ===');
  for (const search of searches) {
    output.out(`\n> memory_read {"query": "${search.query}"}  (looking for "${search.expect}": ${search.found ? 'found' : 'NOT found'})`);
    output.out(search.output.split('\n').slice(0, 14).join('\n'));
  }
  output.out(`\nExplore it: memfold inspect ${conversationId} · memfold search "<words>" --conversation ${conversationId} · memfold context ${conversationId}`);
  return searches.every((s) => s.found) ? 0 : 1;
}
