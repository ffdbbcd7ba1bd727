/**
 * An MCP server over memfold's tools, on `@modelcontextprotocol/sdk`. It answers `initialize` and `tools/list`
 * from definitions alone: the stores open on the first tool call (`backend`, called once and shared), so a
 * client is not kept waiting while PGlite and LanceDB open. Transports (stdio, Streamable HTTP) connect to it.
 */
import type { Server } from '@modelcontextprotocol/sdk/server/index.js';
import type { z } from 'zod';
import { callMcpTool, mcpTools, type McpAccess, type McpBackend } from './mcp-tools.js';
import type { Memfold } from '../memfold.js';
import { memfoldBackend } from './mcp-backends.js';
import { mcpScope, type McpScope, type McpScopeOptions } from './mcp-scope.js';
import { mcpServerSdk } from './mcp-sdk.js';
import { onDemand, zod } from '../zod-on-demand.js';

export interface McpServerOptions {
  scope: McpScope;
  access: McpAccess;
  /** Opens (or returns) what the tools reach; called on the first tool call, not before. */
  backend: () => Promise<McpBackend>;
  /** The version the server reports in `initialize`. */
  version: string;
}

function instructions(scope: McpScope, access: McpAccess): string {
  const where = scope.single ? `conversation ${scope.conversations[0]}` : `the conversations ${scope.conversations.join(', ')} (name one in each call)`;
  const what = access === 'archive' ? 'search and read its archive' : access === 'read' ? 'read its context and archive' : 'read and compact it';
  return `memfold memory for ${where}: ${what}. Use memory_read to find what was summarized out of the context, word for word.`;
}

export { openOnce } from '../open-once.js';

/**
 * `tools/call` with any `name` and `arguments`. The SDK's `Server.setRequestHandler` checks a call against its own
 * schema first and answers a mismatch (`arguments` sent as a string, say) with JSON-RPC -32603 and a raw zod dump,
 * where MCP puts a tool's errors in its result for the model to read. So this one handler is registered through
 * `Protocol.setRequestHandler` (the method Server overrides) with this schema, and `callMcpTool` checks the name and
 * the arguments itself, answering `isError`.
 */
const anyToolCall = onDemand(() => {
  const z = zod();
  return z.object({
    method: z.literal('tools/call'),
    // Optional explicitly: in zod 4 an object key of z.unknown() is required, and MCP lets a call leave `arguments` out.
    params: z.looseObject({ name: z.unknown().optional(), arguments: z.unknown().optional() }).optional(),
  });
});
type AnyToolCall = ReturnType<typeof anyToolCall>;

type ToolCallHandler = (request: z.output<AnyToolCall>) => Promise<unknown>;

export function createMcpServer(options: McpServerOptions): Server {
  const { scope, access, backend } = options;
  const { Server, Protocol, ListToolsRequestSchema } = mcpServerSdk();
  const server = new Server({ name: 'memfold', version: options.version }, { capabilities: { tools: {} }, instructions: instructions(scope, access) });
  const tools = mcpTools(scope, access);
  server.setRequestHandler(ListToolsRequestSchema, async () => ({ tools }));
  const onToolCall: ToolCallHandler = async (request) =>
    callMcpTool(typeof request.params?.name === 'string' ? request.params.name : String(request.params?.name), request.params?.arguments, {
      scope,
      access,
      backend,
    });
  (Protocol.prototype.setRequestHandler as (this: Server, schema: AnyToolCall, handler: ToolCallHandler) => void).call(server, anyToolCall(), onToolCall);
  return server;
}

export interface MemfoldMcpOptions extends McpScopeOptions {
  /** Also serve `compact`. Default false: memory_read and context. */
  writable?: boolean;
  /** Reported in `initialize`. Default `0.0.0`. */
  version?: string;
}

/** An MCP server over a memfold this process has open (the process that owns the embedded store serves it). */
export function mcpServerFor(memfold: Pick<Memfold, 'memoryRead' | 'context' | 'compactTool'>, options: MemfoldMcpOptions): Server {
  const access: McpAccess = options.writable === true ? 'write' : 'read';
  const backend = memfoldBackend(memfold, access);
  const scope = mcpScope(options);
  return createMcpServer({ scope, access, backend: async () => backend, version: options.version ?? '0.0.0' });
}
