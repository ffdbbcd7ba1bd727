/**
 * Entries whose modules are most of memfold, behind functions of the same signature that import them on first call:
 * `createMemfold` (the composition root, with every adapter factory and the whole pipeline) and `serveMcpHttp` (Node's
 * HTTP server: an ES import of `node:http` alone loads over a hundred of Node's internal modules, TLS, HTTP/2 and
 * fetch among them). Importing memfold then loads what a program needs at once (types are free), and the first call
 * pays for the rest.
 */
import type { McpHttpListener, McpHttpOptions } from './mcp/mcp-http.js';
import type { Memfold } from './memfold-api.js';
import type { MemfoldOptions } from './memfold-options.js';

export async function createMemfold(given: MemfoldOptions = {}): Promise<Memfold> {
  const memfold = await import('./memfold.js');
  return memfold.createMemfold(given);
}

export async function serveMcpHttp(options: McpHttpOptions): Promise<McpHttpListener> {
  const http = await import('./mcp/mcp-http.js');
  return http.serveMcpHttp(options);
}
