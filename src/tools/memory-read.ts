/**
 * The memory_read tool: an OpenAI function-tool definition and its handler, bound to one
 * conversation when created. The conversation id is never an argument, so no call can reach another
 * conversation's archive. Failures come back as data: `{ ok: false, error }`.
 */
import type { ArchiveEntry } from '../agent/types.js';
import { errorMessage } from '../errors.js';
import { indentArchivedText } from '../compaction/headers.js';
import type { MemoryManager } from '../memory/memory-manager.js';
import { MEMORY_READ_DEFAULT_LIMIT, MEMORY_READ_MAX_LIMIT, parseMemoryReadArgs, type MemoryReadArgs } from './memory-read-args.js';

export interface ToolResult {
  ok: boolean;
  output: string;
  error?: string;
}

export interface FunctionToolDefinition {
  type: 'function';
  function: { name: string; description: string; parameters: Record<string, unknown> };
}

export interface MemoryReadTool {
  definition: FunctionToolDefinition;
  execute(args: unknown): Promise<ToolResult>;
}

export const MEMORY_READ_DEFINITION: FunctionToolDefinition = {
  type: 'function',
  function: {
    name: 'memory_read',
    description:
      'Search or read the archived part of this conversation (older messages that were summarized out of the context). ' +
      'Use `query` to search summaries and the exact archived messages by words, names, numbers or paths; ' +
      'use `label` to read one archived batch in full, with the batches or transcript segments under it.',
    parameters: {
      type: 'object',
      additionalProperties: false,
      properties: {
        query: { type: 'string', description: 'Words to search for.' },
        label: { type: 'string', description: 'Read one batch by its label (as shown in the context summary or a search hit).' },
        depth: { type: 'integer', minimum: 0, description: 'Only summaries of this depth (0 summarizes messages; higher depths summarize batches).' },
        kind: { type: 'string', enum: ['summary', 'transcript'], description: 'Only summaries, or only verbatim transcript segments.' },
        from: { type: 'string', description: 'ISO date/time: only archive entries that end at or after it.' },
        to: { type: 'string', description: 'ISO date/time: only archive entries that start at or before it.' },
        limit: { type: 'integer', minimum: 1, maximum: MEMORY_READ_MAX_LIMIT, default: MEMORY_READ_DEFAULT_LIMIT },
      },
    },
  },
};

/** Search hits show this much text each; reading the label gives the whole entry. */
const HIT_TEXT_CHARS = 2_000;

function describe(entry: ArchiveEntry): string {
  const what = entry.kind === 'summary' ? `summary depth ${entry.depth}` : 'transcript';
  return `${what} | ${entry.label} | ${entry.start} .. ${entry.end} | ${entry.count} ${entry.kind === 'summary' && entry.depth > 0 ? 'batches' : 'messages'}`;
}

/** Archived text is indented under its column-0 line, so it cannot pass for another hit or a tool's own line. */
function excerpt(entry: ArchiveEntry): string {
  if (entry.content.length <= HIT_TEXT_CHARS) return indentArchivedText(entry.content);
  return `${indentArchivedText(entry.content.slice(0, HIT_TEXT_CHARS))}\n[... cut; read label ${entry.label} for the full text]`;
}

async function children(memory: MemoryManager, entry: ArchiveEntry): Promise<ArchiveEntry[]> {
  if (entry.kind !== 'summary') return [];
  if (entry.depth > 0) return memory.read(entry.conversationId, entry.sourceIds);
  const transcripts = await memory.list({ conversationId: entry.conversationId, kind: 'transcript', from: entry.start, to: entry.end });
  return transcripts.filter((t) => t.parentLabel === entry.label);
}

async function readLabel(memory: MemoryManager, conversationId: string, label: string): Promise<ToolResult> {
  const [entry] = await memory.read(conversationId, [label]);
  if (!entry) return { ok: false, output: `No archived entry has the label ${label} in this conversation.`, error: 'not_found' };
  const lines = [describe(entry), indentArchivedText(entry.content)];
  if (entry.parentLabel) lines.push('', `Covered by: ${entry.parentLabel}`);
  const under = await children(memory, entry);
  if (under.length > 0) lines.push('', `Under it (${under.length}):`, ...under.map((c) => `- ${describe(c)}`));
  return { ok: true, output: lines.join('\n') };
}

async function search(memory: MemoryManager, conversationId: string, args: MemoryReadArgs): Promise<ToolResult> {
  const hits = await memory.search({
    conversationId,
    query: args.query!,
    limit: args.limit,
    ...(args.depth !== undefined ? { depth: args.depth } : {}),
    ...(args.kind !== undefined ? { kind: args.kind } : {}),
    ...(args.from !== undefined ? { from: args.from } : {}),
    ...(args.to !== undefined ? { to: args.to } : {}),
  });
  if (hits.length === 0) return { ok: true, output: `No archived entry matches "${args.query}".` };
  const blocks = hits.map((hit, i) => `#${i + 1} ${describe(hit.entry)}\n${excerpt(hit.entry)}`);
  return { ok: true, output: [`${hits.length} archived entries for "${args.query}", best first:`, ...blocks].join('\n\n') };
}

export function createMemoryReadTool(memory: MemoryManager, conversationId: string): MemoryReadTool {
  return {
    definition: MEMORY_READ_DEFINITION,
    async execute(input) {
      let args: MemoryReadArgs;
      try {
        args = parseMemoryReadArgs(input);
      } catch (error) {
        return { ok: false, output: errorMessage(error), error: errorMessage(error) };
      }
      try {
        return args.label !== undefined ? await readLabel(memory, conversationId, args.label) : await search(memory, conversationId, args);
      } catch (error) {
        return { ok: false, output: `memory_read failed: ${errorMessage(error)}`, error: errorMessage(error) };
      }
    },
  };
}
