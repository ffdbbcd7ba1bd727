/**
 * The parts of `@modelcontextprotocol/sdk` the server needs, loaded by the first `createMcpServer`: the SDK (with
 * ajv, zod-to-json-schema and hono behind it) is most of what importing memfold would otherwise cost a program
 * that never serves MCP. `createMcpServer` answers synchronously, hence `loadNow`.
 */
import { loadNow } from '../load-now.js';

type ServerModule = typeof import('@modelcontextprotocol/sdk/server/index.js');
type ProtocolModule = typeof import('@modelcontextprotocol/sdk/shared/protocol.js');
type TypesModule = typeof import('@modelcontextprotocol/sdk/types.js');

export interface McpServerSdk {
  Server: ServerModule['Server'];
  Protocol: ProtocolModule['Protocol'];
  ListToolsRequestSchema: TypesModule['ListToolsRequestSchema'];
}

let sdk: McpServerSdk | undefined;

/** The SDK's server classes, loaded by the first call. */
export function mcpServerSdk(): McpServerSdk {
  sdk ??= {
    Server: loadNow<ServerModule>('@modelcontextprotocol/sdk/server/index.js').Server,
    Protocol: loadNow<ProtocolModule>('@modelcontextprotocol/sdk/shared/protocol.js').Protocol,
    ListToolsRequestSchema: loadNow<TypesModule>('@modelcontextprotocol/sdk/types.js').ListToolsRequestSchema,
  };
  return sdk;
}
