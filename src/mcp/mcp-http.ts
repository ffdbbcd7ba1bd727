/**
 * memfold's MCP server over Streamable HTTP (stateless: each POST to `/mcp` is answered on its own, so any
 * number of clients share one process and one opening of the stores). Bound to 127.0.0.1 by default; see
 * `mcp-http-auth.ts` for who may call it.
 */
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Server } from '@modelcontextprotocol/sdk/server/index.js';
import { authorized, checkHttpAccess, isLoopback, loopbackHostAllowed } from './mcp-http-auth.js';

export interface McpHttpOptions {
  /** A new MCP server for each request (cheap: the stores behind it are opened once and shared). */
  server: () => Server;
  /** Default 0: a free port. */
  port?: number;
  /** Default 127.0.0.1. */
  host?: string;
  /** Bearer token; required unless `host` is a loopback address. */
  token?: string;
}

export interface McpHttpListener {
  /** `http://host:port/mcp`. */
  url: string;
  close(): Promise<void>;
}

function reply(res: ServerResponse, status: number, message: string): void {
  res.writeHead(status, { 'content-type': 'application/json' }).end(JSON.stringify({ jsonrpc: '2.0', error: { code: -32000, message }, id: null }));
}

export async function serveMcpHttp(options: McpHttpOptions): Promise<McpHttpListener> {
  const host = options.host ?? '127.0.0.1';
  checkHttpAccess(host, options.token);
  let port = options.port ?? 0;
  const handle = async (req: IncomingMessage, res: ServerResponse) => {
    if (new URL(req.url ?? '/', 'http://x').pathname !== '/mcp') return reply(res, 404, 'Not found: the MCP endpoint is /mcp');
    // Checked here rather than by the SDK's allowedHosts, which compares the header's exact text with a fixed list.
    if (isLoopback(host) && !loopbackHostAllowed(req.headers.host, port)) {
      return reply(res, 403, `Forbidden: the Host header must name this machine (localhost or a loopback address) at port ${port}`);
    }
    if (!authorized(req.headers.authorization, options.token)) {
      res.setHeader('www-authenticate', 'Bearer');
      return reply(res, 401, 'Unauthorized: send Authorization: Bearer <token>');
    }
    // Stateless: no session to resume or stream to, so only POST carries requests.
    if (req.method !== 'POST') return reply(res, 405, 'Method not allowed: this server is stateless, POST requests to /mcp');
    const server = options.server();
    // Loaded here, not with memfold: only a program serving MCP over HTTP needs the transport (and hono behind it).
    const { StreamableHTTPServerTransport } = await import('@modelcontextprotocol/sdk/server/streamableHttp.js');
    // No sessionIdGenerator: stateless.
    const transport = new StreamableHTTPServerTransport({ enableJsonResponse: true });
    res.on('close', () => {
      void transport.close();
      void server.close();
    });
    await server.connect(transport);
    await transport.handleRequest(req, res);
  };
  const http = createServer((req, res) => {
    handle(req, res).catch(() => {
      if (!res.headersSent) reply(res, 500, 'Internal error');
      else res.end();
    });
  });
  await new Promise<void>((resolve, reject) => {
    http.once('error', reject);
    http.listen(port, host, () => resolve());
  });
  port = (http.address() as AddressInfo).port;
  const shown = host.includes(':') ? `[${host}]` : host;
  return {
    url: `http://${shown}:${port}/mcp`,
    close: () =>
      new Promise<void>((resolve, reject) => {
        http.closeAllConnections();
        http.close((error) => (error ? reject(error) : resolve()));
      }),
  };
}
