/**
 * What the AI SDK middleware does around each model call, for generate and stream alike: store the prompt's new
 * messages, compact, build the call from `context()` with the memory_read tool offered, store the answer, run the
 * memory_read calls the model made and store their results.
 */
import type { NewMessage, ToolCall } from '../conversation/types.js';
import { InvalidArgumentError } from '../errors.js';
import { fromModelMessages, toModelMessages } from './ai-sdk-messages.js';
import type { CallOptions, FunctionTool, PromptMessage, Usage } from './ai-sdk-types.js';
import type { MemfoldHost } from './memfold-host.js';
import { storeUnstored } from './unstored-messages.js';

export type { MemfoldHost } from './memfold-host.js';

export interface MemfoldMiddlewareOptions {
  memfold: MemfoldHost;
  /** The conversation every call of the wrapped model belongs to. */
  conversationId: string;
  /** The role memfold's notes (the clip-archive, the continuation note) are sent with. Default `user`. */
  memoryAs?: 'system' | 'user';
  /** memory_read rounds the middleware runs within one model call before it asks for an answer without it. Default 3. */
  maxMemoryReads?: number;
}

export const MEMORY_READ = 'memory_read';
const DEFAULT_MAX_MEMORY_READS = 3;

export interface Session {
  readonly conversationId: string;
  readonly maxMemoryReads: number;
  /** Stores the prompt's messages memfold does not hold yet; returns the app's system messages, sent as they are. */
  begin(params: CallOptions): Promise<PromptMessage[]>;
  /** Compacts (unless background compaction does), and the call's options: the context, the app's tools and memory_read. */
  callParams(params: CallOptions, system: PromptMessage[], offerRead: boolean): Promise<CallOptions>;
  /** Whether a call is the middleware's to run: memory_read, unless the app brought its own tool of that name. */
  isInternal(params: CallOptions, call: Pick<ToolCall['function'], 'name'>): boolean;
  /** Stores the answer (usage first, for the calibration); then runs its memory_read calls and stores their results. */
  settle(params: CallOptions, reply: NewMessage, usage: Usage): Promise<{ reads: number; others: number }>;
}

function checkOptions(options: MemfoldMiddlewareOptions): number {
  if (typeof options.conversationId !== 'string' || options.conversationId === '') {
    throw new InvalidArgumentError('conversationId', 'must be a non-empty string');
  }
  const max = options.maxMemoryReads ?? DEFAULT_MAX_MEMORY_READS;
  if (!Number.isInteger(max) || max < 0 || max > 20) throw new InvalidArgumentError('maxMemoryReads', 'must be an integer from 0 to 20');
  if (options.memoryAs !== undefined && options.memoryAs !== 'system' && options.memoryAs !== 'user') {
    throw new InvalidArgumentError('memoryAs', "must be 'system' or 'user'");
  }
  return max;
}

const appHasTool = (params: CallOptions, name: string) => (params.tools ?? []).some((tool) => tool.name === name);

export function createSession(options: MemfoldMiddlewareOptions): Session {
  const maxMemoryReads = checkOptions(options);
  const { memfold, conversationId } = options;
  const memoryRead = memfold.memoryRead(conversationId);
  const readTool: FunctionTool = {
    type: 'function',
    name: MEMORY_READ,
    description: memoryRead.definition.function.description,
    inputSchema: structuredClone(memoryRead.definition.function.parameters) as FunctionTool['inputSchema'],
  };
  const isInternal: Session['isInternal'] = (params, call) => call.name === MEMORY_READ && !appHasTool(params, MEMORY_READ);

  return {
    conversationId,
    maxMemoryReads,
    isInternal,
    async begin(params) {
      const system = params.prompt.filter((message) => message.role === 'system');
      const incoming = fromModelMessages(params.prompt.filter((message) => message.role !== 'system'));
      const hiddenTool = appHasTool(params, MEMORY_READ) ? undefined : MEMORY_READ;
      await storeUnstored({ memfold, conversationId, incoming, hiddenTool });
      return system;
    },
    async callParams(params, system, offerRead) {
      // With background compaction the append queued a job, and context() compacts at the window.
      if (!memfold.compactor.settingsOf(conversationId).background) await memfold.compact(conversationId);
      const context = await memfold.context(conversationId);
      const prompt = [...system, ...toModelMessages(context, { memoryAs: options.memoryAs ?? 'user' })];
      const internal = !appHasTool(params, MEMORY_READ);
      const tools = [...(params.tools ?? []), ...(internal && offerRead ? [readTool] : [])];
      return { ...params, prompt, ...(tools.length > 0 ? { tools } : {}) };
    },
    async settle(params, reply, usage) {
      const promptTokens = usage.inputTokens.total;
      if (promptTokens !== undefined && Number.isInteger(promptTokens) && promptTokens > 0) {
        // Calibration is advice: a failure to record it must not fail the app's call.
        await memfold.observeUsage(conversationId, { promptTokens }).catch(() => undefined);
      }
      const calls = reply.toolCalls ?? [];
      if (reply.content === '' && calls.length === 0) return { reads: 0, others: 0 };
      await memfold.append(conversationId, [reply]);
      const reads = calls.filter((call) => isInternal(params, call.function));
      if (reads.length === 0) return { reads: 0, others: calls.length };
      const results: NewMessage[] = [];
      for (const call of reads) {
        const { output } = await memoryRead.execute(call.function.arguments);
        results.push({ role: 'tool', toolCallId: call.id, content: output });
      }
      await memfold.append(conversationId, results);
      return { reads: reads.length, others: calls.length - reads.length };
    },
  };
}

/** Two usages added up: the answer's usage covers every model call the middleware made for it. */
export function addUsage(a: Usage | undefined, b: Usage): Usage {
  if (a === undefined) return b;
  const sum = (x: number | undefined, y: number | undefined) => (x === undefined && y === undefined ? undefined : (x ?? 0) + (y ?? 0));
  return {
    inputTokens: {
      total: sum(a.inputTokens.total, b.inputTokens.total),
      noCache: sum(a.inputTokens.noCache, b.inputTokens.noCache),
      cacheRead: sum(a.inputTokens.cacheRead, b.inputTokens.cacheRead),
      cacheWrite: sum(a.inputTokens.cacheWrite, b.inputTokens.cacheWrite),
    },
    outputTokens: {
      total: sum(a.outputTokens.total, b.outputTokens.total),
      text: sum(a.outputTokens.text, b.outputTokens.text),
      reasoning: sum(a.outputTokens.reasoning, b.outputTokens.reasoning),
    },
  };
}
