/**
 * The tools an MCP server lists and how a call reaches memfold. Pure apart from the backend it is given: the
 * definitions are memfold's own tool definitions (one schema for OpenAI, the AI SDK and MCP), with a required
 * `conversation` argument added when the server's scope is an allow-list. Every answer is a tool result, never a
 * protocol error, so the model reads why a call was refused.
 */
import { formatContext } from '../conversation/context-text.js';
import type { ConversationMessage } from '../conversation/types.js';
import { errorMessage } from '../errors.js';
import { COMPACT_DEFINITION } from '../tools/compact-tool.js';
import { MEMORY_READ_DEFINITION } from '../tools/memory-read.js';
import { toolArgumentsObject, type ToolResult } from '../tools/tool-arguments.js';
import { ScopeRefusal, scopedConversation, type McpScope } from './mcp-scope.js';

/** What a server reaches: memory_read always; the live context and compaction only where the server opened the live store. */
export interface McpBackend {
  memoryRead(conversationId: string): { execute(args: unknown): Promise<ToolResult> };
  context?(conversationId: string): Promise<ConversationMessage[]>;
  compactTool?(conversationId: string): { execute(args: unknown): Promise<ToolResult> };
}

export type McpToolName = 'memory_read' | 'context' | 'compact';

export interface McpToolSpec {
  name: McpToolName;
  description: string;
  inputSchema: { type: 'object'; properties?: Record<string, unknown>; required?: string[]; [key: string]: unknown };
}

/** What the server was opened to do: read the archive only, also read the live context, or also compact. */
export type McpAccess = 'archive' | 'read' | 'write';

const CONTEXT_DESCRIPTION = 'The conversation as the model sees it now: system prompt, the archive summary, and the live messages, oldest first.';

function withConversation(schema: Record<string, unknown>, scope: McpScope): McpToolSpec['inputSchema'] {
  const properties = (schema.properties ?? {}) as Record<string, unknown>;
  const required = (schema.required ?? []) as string[];
  if (scope.single) return { ...schema, type: 'object', properties, required };
  return {
    ...schema,
    type: 'object',
    properties: { conversation: { type: 'string', enum: [...scope.conversations], description: 'The conversation to use.' }, ...properties },
    required: ['conversation', ...required],
  };
}

export function mcpTools(scope: McpScope, access: McpAccess): McpToolSpec[] {
  const tools: McpToolSpec[] = [
    {
      name: 'memory_read',
      description: MEMORY_READ_DEFINITION.function.description,
      inputSchema: withConversation(MEMORY_READ_DEFINITION.function.parameters, scope),
    },
  ];
  if (access !== 'archive') {
    tools.push({ name: 'context', description: CONTEXT_DESCRIPTION, inputSchema: withConversation({ type: 'object', properties: {} }, scope) });
  }
  if (access === 'write') {
    tools.push({
      name: 'compact',
      description: COMPACT_DEFINITION.function.description,
      inputSchema: withConversation(COMPACT_DEFINITION.function.parameters, scope),
    });
  }
  return tools;
}

/** An MCP tool result: the text the model reads, flagged as an error when the call was refused or failed. */
export type McpToolAnswer = {
  content: Array<{ type: 'text'; text: string }>;
  isError: boolean;
};

const answer = (result: ToolResult): McpToolAnswer => ({ content: [{ type: 'text', text: result.output }], isError: !result.ok });

/**
 * Run one call: the tool must be one this server lists, the conversation one its scope holds (checked before
 * the backend opens), and the remaining arguments go to memfold's own tool, which validates them.
 */
export async function callMcpTool(
  name: string,
  input: unknown,
  context: { scope: McpScope; access: McpAccess; backend: () => Promise<McpBackend> },
): Promise<McpToolAnswer> {
  const listed = mcpTools(context.scope, context.access).some((tool) => tool.name === name);
  if (!listed) return answer({ ok: false, output: `Unknown tool ${JSON.stringify(name)} on this server.` });
  let conversationId: string;
  let args: Record<string, unknown>;
  try {
    const { conversation, ...rest } = toolArgumentsObject(input ?? {});
    conversationId = scopedConversation(context.scope, conversation);
    args = rest;
  } catch (error) {
    return answer({ ok: false, output: ScopeRefusal.isInstance(error) ? error.message : errorMessage(error) });
  }
  try {
    const backend = await context.backend();
    if (name === 'memory_read') return answer(await backend.memoryRead(conversationId).execute(args));
    if (name === 'context' && backend.context) {
      if (Object.keys(args).length > 0) return answer({ ok: false, output: `context takes no arguments (got ${Object.keys(args).join(', ')})` });
      const messages = await backend.context(conversationId);
      return answer({ ok: true, output: messages.length > 0 ? formatContext(messages) : 'This conversation has no messages.' });
    }
    if (name === 'compact' && backend.compactTool) return answer(await backend.compactTool(conversationId).execute(args));
    return answer({ ok: false, output: `${name} is not available on this server.` });
  } catch (error) {
    return answer({ ok: false, output: `${name} failed: ${errorMessage(error)}` });
  }
}
