/**
 * The memory_read tool: an OpenAI function-tool definition and its handler, bound to one
 * conversation when created. The conversation id is never an argument, so no call can reach another
 * conversation's archive. Failures come back as data: `{ ok: false, error }`.
 */
import type { ArchiveEntry, ConversationMessage } from '../conversation/types.js';
import { indentArchivedText } from '../compaction/format/headers.js';
import { InvalidArgumentError } from '../errors.js';
import type { Archive } from '../archive/archive.js';
import type { Embedder } from '../embedding/embedder.js';
import { vectorCache } from './memory-read-semantic.js';
import {
  MEMORY_READ_DEFAULT_TOKENS,
  MEMORY_READ_MAX_TOKENS,
  MEMORY_READ_MIN_TOKENS,
  memoryReadParameters,
  parseMemoryReadArgs,
  type MemoryReadArgs,
} from './memory-read-args.js';
import { DEFAULT_READ_STRATEGY, type ReadStrategy } from './memory-read-strategy.js';
import { runTool, type ToolResult } from './tool-arguments.js';
import { definitionOnDemand, shapedDefinitions, type FunctionToolDefinition, type ShapedDefinitions } from './tool-shapes.js';

export type { FunctionToolDefinition, ToolResult };

export interface MemoryReadOptions {
  /** Tokens a search answer may take, when the call gives no `max_tokens`. Default 3,000; 200 to 12,000. */
  maxTokens?: number;
  /** Counts the answer's tokens. Default chars/4, rounded up. */
  countTokens?: (text: string) => number;
  /** Ranking and display choices; the defaults are the measured best (the eval compares others). */
  strategy?: Partial<ReadStrategy>;
  /**
   * The conversation's live history (`memfold.memoryRead` passes its live rows): a search then also shows matching
   * messages still in the context, in passages labelled `live history`, after archived ones of the same strength.
   */
  live?: () => Promise<readonly ConversationMessage[]>;
  /**
   * A semantic embedder (not the lexical hashing one): candidate messages are then ranked by their closeness to the
   * question by meaning too, at `strategy.semanticWeight`, so evidence that shares no word with the question can be
   * shown. Each text is embedded once per tool (a bounded cache). Unset: words alone.
   */
  embedder?: Embedder;
  /** Told when the embedder fails during a search (the answer then ranks by words alone). Default: ignored. */
  onWarning?: (message: string, error: unknown) => void;
}

/** `definition`: the Chat Completions definition, frozen; `definitionFor(format, { strict })`: each API's shape (`tool-shapes.ts`). */
export interface MemoryReadTool extends ShapedDefinitions {
  definition: FunctionToolDefinition;
  /**
   * Runs one call. `asked.at` (ISO), when the host knows it, is when the question is asked (the conversation's
   * current time): relative times in a query ("last Saturday") resolve against it. It is never a tool argument.
   */
  execute(args: unknown, asked?: { at?: string }): Promise<ToolResult>;
}

export const MEMORY_READ_DEFINITION: FunctionToolDefinition = definitionOnDemand(
  {
    name: 'memory_read',
    description:
      'Search or read the archived part of this conversation (older messages that were summarized out of the context). ' +
      'Use `query` to search by words, names, numbers or paths: the answer shows the exact archived messages that match, ' +
      'each with its neighbours, best first (summaries only when no message matches, or with kind "summary"); ' +
      'use `label` to read one archived batch, transcript segment or cleared tool output in full, with what lies under it.',
  },
  memoryReadParameters,
);

/** The search and its ranking (`memory-read-search.ts`, most of the tool's modules), loaded by the first call. */
const search = () => import('./memory-read-search.js');

async function children(archive: Archive, entry: ArchiveEntry): Promise<ArchiveEntry[]> {
  if (entry.kind !== 'summary') return [];
  if (entry.depth > 0) return archive.read(entry.conversationId, entry.sourceIds);
  const transcripts = await archive.list({ conversationId: entry.conversationId, kind: 'transcript', from: entry.start, to: entry.end });
  return transcripts.filter((t) => t.parentLabel === entry.label);
}

async function readLabel(archive: Archive, conversationId: string, label: string): Promise<ToolResult> {
  // A label read shows the entry's text in full; its hit line is the same one a search shows.
  const { describeEntry: describe } = await search();
  const [entry] = await archive.read(conversationId, [label]);
  if (!entry) return { ok: false, output: `No archived entry has the label ${label} in this conversation.`, error: 'not_found' };
  const lines = [describe(entry), indentArchivedText(entry.content)];
  if (entry.parentLabel) lines.push('', `Covered by: ${entry.parentLabel}`);
  const under = await children(archive, entry);
  if (under.length > 0) lines.push('', `Under it (${under.length}):`, ...under.map((c) => `- ${describe(c)}`));
  return { ok: true, output: lines.join('\n') };
}

const charsOver4 = (text: string) => Math.ceil(text.length / 4);

export function createMemoryReadTool(archive: Archive, conversationId: string, options: MemoryReadOptions = {}): MemoryReadTool {
  const maxTokens = options.maxTokens ?? MEMORY_READ_DEFAULT_TOKENS;
  if (!Number.isInteger(maxTokens) || maxTokens < MEMORY_READ_MIN_TOKENS || maxTokens > MEMORY_READ_MAX_TOKENS) {
    throw new InvalidArgumentError('maxTokens', `must be an integer from ${MEMORY_READ_MIN_TOKENS} to ${MEMORY_READ_MAX_TOKENS}`);
  }
  const strategy: ReadStrategy = { ...DEFAULT_READ_STRATEGY, ...options.strategy };
  const countTokens = options.countTokens ?? charsOver4;
  const semantic = options.embedder
    ? { embedder: options.embedder, cache: vectorCache(), ...(options.onWarning ? { onWarning: options.onWarning } : {}) }
    : undefined;
  return {
    definition: MEMORY_READ_DEFINITION,
    definitionFor: shapedDefinitions(MEMORY_READ_DEFINITION),
    execute: (input, asked) =>
      runTool('memory_read', input, parseMemoryReadArgs, async (args: MemoryReadArgs) => {
        if (args.label !== undefined) return readLabel(archive, conversationId, args.label);
        const { searchAnswer } = await search();
        const output = await searchAnswer(archive, conversationId, args, {
          strategy,
          budget: args.maxTokens ?? maxTokens,
          countTokens,
          ...(asked?.at !== undefined ? { at: asked.at } : {}),
          ...(options.live ? { live: options.live } : {}),
          ...(semantic ? { semantic } : {}),
        });
        return { ok: true, output };
      }),
  };
}
