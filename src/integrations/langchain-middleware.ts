/**
 * memfold as LangChain v1 agent middleware: a drop-in for `summarizationMiddleware` in `createAgent` that archives
 * instead of dropping. Before each model call the state's new messages go into memfold, memfold compacts (by its own
 * trigger, or by the `trigger` conditions summarizationMiddleware takes), and the state's messages are replaced by
 * `context()`; after each model call the answer is stored. The `memory_read` tool is added to the agent, so the model
 * can read what was archived: see src/integrations/README.md.
 */
import { RemoveMessage, SystemMessage } from '@langchain/core/messages';
import { DynamicStructuredTool } from '@langchain/core/tools';
import type { JSONSchema } from '@langchain/core/utils/json_schema';
import { type AgentMiddleware, createMiddleware } from 'langchain';
import { InvalidArgumentError } from '../errors.js';
import { MEMORY_READ_DEFINITION } from '../tools/memory-read.js';
import type { MemfoldHost } from './memfold-host.js';
import { fromLangChainMessages, isMemfoldNote, toLangChainMessages } from './langchain-messages.js';
import { storeUnstored } from './unstored-messages.js';

/** As summarizationMiddleware's: every given bound must be reached (tokens as memfold counts them, fraction of its window). */
export interface TriggerCondition {
  tokens?: number;
  messages?: number;
  fraction?: number;
}

export interface MemfoldSummarizationOptions {
  memfold: MemfoldHost;
  /** The conversation; default the run's `thread_id` (`configurable.thread_id`). */
  conversationId?: string;
  /** When to compact: one condition, or several of which any. Default memfold's own trigger (`compaction.trigger`). */
  trigger?: TriggerCondition | TriggerCondition[];
  /** summarizationMiddleware's deprecated `maxTokensBeforeSummary`: `trigger: { tokens }`. */
  maxTokensBeforeSummary?: number;
  /** The message class of memfold's notes in the state. Default `user`. */
  memoryAs?: 'system' | 'user';
}

/** LangGraph's sentinel id: a RemoveMessage with it clears the state's messages (`REMOVE_ALL_MESSAGES`). */
const REMOVE_ALL_MESSAGES = '__remove_all__';

type Configurable = { configurable?: { thread_id?: unknown } } | undefined;

function checkTrigger(options: MemfoldSummarizationOptions): TriggerCondition[] | undefined {
  if ('keep' in options) {
    throw new InvalidArgumentError('keep', "is memfold's compaction.keepRecentTokens / keepRecentMessages: set them in createMemfold({ compaction })");
  }
  const given = options.trigger ?? (options.maxTokensBeforeSummary !== undefined ? { tokens: options.maxTokensBeforeSummary } : undefined);
  if (given === undefined) return undefined;
  const conditions = Array.isArray(given) ? given : [given];
  conditions.forEach((condition, index) => {
    const bounds = Object.entries(condition).filter(([, value]) => value !== undefined);
    const bad = bounds.find(([key, value]) => !['tokens', 'messages', 'fraction'].includes(key) || typeof value !== 'number' || !(value > 0));
    if (bounds.length === 0 || bad) throw new InvalidArgumentError(`trigger[${index}]`, 'must give tokens, messages or fraction, each a positive number');
  });
  return conditions;
}

export function memfoldSummarizationMiddleware(options: MemfoldSummarizationOptions): AgentMiddleware {
  const conditions = checkTrigger(options);
  const { memfold } = options;
  const conversationOf = (config: Configurable): string => {
    const id = options.conversationId ?? config?.configurable?.thread_id;
    if (typeof id !== 'string' || id === '') throw new InvalidArgumentError('conversationId', 'must be given, or the run must have a thread_id');
    return id;
  };
  /** Stores the state's new messages; returns how many messages the conversation now has live (no notes). */
  const store = async (conversationId: string, messages: Parameters<typeof fromLangChainMessages>[0]): Promise<number> => {
    const { history, fresh } = await storeUnstored({ memfold, conversationId, incoming: fromLangChainMessages(messages) });
    return history.filter((message) => message.kind !== 'clip_archive').length + fresh.length;
  };
  /** Whether a `trigger` condition is met, counting memfold's live messages (the state may hold only the new turn). */
  const shouldCompact = async (conversationId: string, liveMessages: number): Promise<boolean | undefined> => {
    if (conditions === undefined) return undefined;
    const usage = await memfold.usage(conversationId);
    return conditions.some(
      (c) =>
        (c.tokens === undefined || usage.tokens >= c.tokens) &&
        (c.messages === undefined || liveMessages >= c.messages) &&
        (c.fraction === undefined || usage.tokens >= Math.floor(usage.contextWindow * c.fraction)),
    );
  };

  const memoryTool = new DynamicStructuredTool({
    name: MEMORY_READ_DEFINITION.function.name,
    description: MEMORY_READ_DEFINITION.function.description,
    // LangChain writes into the schema it is given; memfold's definitions are frozen.
    schema: structuredClone(MEMORY_READ_DEFINITION.function.parameters) as JSONSchema,
    func: async (args: Record<string, unknown>, _run, config) => (await memfold.memoryRead(conversationOf(config)).execute(args)).output,
  });

  return createMiddleware({
    name: 'MemfoldSummarizationMiddleware',
    tools: [memoryTool],
    beforeModel: async (state, runtime) => {
      const conversationId = conversationOf(runtime as Configurable);
      const live = await store(conversationId, state.messages);
      const force = await shouldCompact(conversationId, live);
      if (force === true) await memfold.compact(conversationId, { force: true });
      else if (force === undefined && !memfold.compactor.settingsOf(conversationId).background) await memfold.compact(conversationId);
      const context = toLangChainMessages(await memfold.context(conversationId), { memoryAs: options.memoryAs ?? 'user' });
      // System messages in the state are the app's, never stored: they stay first.
      const system = state.messages.filter((message) => SystemMessage.isInstance(message) && !isMemfoldNote(message));
      return { messages: [new RemoveMessage({ id: REMOVE_ALL_MESSAGES }), ...system, ...context] };
    },
    afterModel: async (state, runtime) => {
      await store(conversationOf(runtime as Configurable), state.messages);
      return undefined;
    },
  });
}
