/**
 * `memfold mcp`: serve memfold's tools to MCP clients, over stdio (the default, for clients that start the server)
 * or Streamable HTTP (`--http PORT`). The server answers `initialize` at once and opens the stores on the first tool
 * call. `--read-only` opens the LanceDB archive alone, so the server runs beside an agent that holds the embedded
 * store; otherwise it opens memfold (on PostgreSQL any number of processes may). Runs until stdin closes (stdio) or
 * SIGINT/SIGTERM, then answers the requests already read (stdio, at most 30 s) and closes the stores, waiting for a
 * compaction in flight.
 */
import { resolveRuntimeConfig, type RuntimeConfig } from '../../config.js';
import { InvalidArgumentError, errorMessage } from '../../errors.js';
import { openArchiveBackend, memfoldBackend } from '../../mcp/mcp-backends.js';
import { serveMcpHttp } from '../../mcp/mcp-http.js';
import { checkHttpAccess } from '../../mcp/mcp-http-auth.js';
import { mcpScope, type McpScope } from '../../mcp/mcp-scope.js';
import { createMcpServer, openOnce } from '../../mcp/mcp-server.js';
import { createStdioTransport, DEFAULT_DRAIN_MS } from '../../mcp/mcp-stdio.js';
import type { McpAccess, McpBackend } from '../../mcp/mcp-tools.js';
import { createMemfold } from '../../memfold.js';
import { usage, type ParsedCommand } from '../args.js';
import type { Output } from '../output.js';
import { requireStore } from '../store-check.js';
import { untilSignal } from '../until-signal.js';

interface McpPlan {
  scope: McpScope;
  access: McpAccess;
  config: RuntimeConfig;
  http?: { port: number; host: string; token?: string };
}

/** The library names the scope's fields (`conversation`, `allow[1]`); the command names its flags. */
function asFlags<T>(build: () => T): T {
  try {
    return build();
  } catch (error) {
    if (InvalidArgumentError.isInstance(error)) {
      const rule = error.message.slice(`Invalid argument ${error.field}: `.length);
      throw new InvalidArgumentError(`--${error.field.replace(/\[\d+\]$/, '')}`, rule);
    }
    throw error;
  }
}

/**
 * The command's flags as a plan, every refusal naming its flag. A server that reads must be pointed at a store: a
 * missing one is refused last, before `initialize` is answered, rather than on the first tool call (or with an empty
 * archive made where a mistyped --home points).
 */
function planOf(command: ParsedCommand, env: Record<string, string | undefined>): McpPlan {
  const plan = flagsPlan(command, env);
  if (plan.access !== 'write') requireStore(plan.config, plan.access === 'archive' ? 'archive' : 'live');
  return plan;
}

function flagsPlan(command: ParsedCommand, env: Record<string, string | undefined>): McpPlan {
  const { flags } = command;
  if (flags['read-only'] === true && flags.writable === true) throw new InvalidArgumentError('--writable', 'cannot be combined with --read-only');
  const scope = asFlags(() =>
    mcpScope({
      ...(typeof flags.conversation === 'string' ? { conversation: flags.conversation } : {}),
      // Ids are exact, as the store keeps them: " a" is not "a".
      ...(typeof flags.allow === 'string' ? { allow: flags.allow.split(',') } : {}),
    }),
  );
  const access: McpAccess = flags['read-only'] === true ? 'archive' : flags.writable === true ? 'write' : 'read';
  const config = resolveRuntimeConfig(
    {
      ...(typeof flags.home === 'string' ? { home: flags.home } : {}),
      ...(typeof flags.namespace === 'string' ? { namespace: flags.namespace } : {}),
    },
    env,
  );
  if (typeof flags.http !== 'number') {
    for (const flag of ['host', 'token']) if (flags[flag] !== undefined) throw new InvalidArgumentError(`--${flag}`, 'applies to --http only');
    return { scope, access, config };
  }
  const token = typeof flags.token === 'string' ? flags.token : env.MEMFOLD_MCP_TOKEN || undefined;
  const host = typeof flags.host === 'string' ? flags.host : '127.0.0.1';
  checkHttpAccess(host, token);
  return { scope, access, config, http: { port: flags.http, host, ...(token !== undefined ? { token } : {}) } };
}

/** The backend the plan asks for, with what closes it. */
function backendOf(plan: McpPlan): { open: () => Promise<McpBackend>; close: () => Promise<void> } {
  let close: () => Promise<void> = async () => undefined;
  const open = openOnce(async () => {
    if (plan.access === 'archive') {
      const backend = await openArchiveBackend(plan.config);
      close = () => backend.close();
      return backend;
    }
    const writing = plan.access === 'write';
    const memfold = await createMemfold({ config: plan.config, migrate: writing, reconcileOnOpen: writing });
    close = () => memfold.close();
    return memfoldBackend(memfold, plan.access);
  });
  return { open, close: () => close() };
}

export async function runMcp(command: ParsedCommand, output: Output, version: string, env: Record<string, string | undefined> = process.env): Promise<number> {
  let plan: McpPlan;
  try {
    plan = planOf(command, env);
  } catch (error) {
    output.err(`memfold mcp: ${errorMessage(error)}\n\n${usage('mcp')}`);
    return 2;
  }
  const backend = backendOf(plan);
  const server = () => createMcpServer({ scope: plan.scope, access: plan.access, backend: backend.open, version });
  try {
    if (plan.http) {
      const listener = await serveMcpHttp({ server, ...plan.http });
      // stdout carries the address alone, so a script can read it (with --http 0, the port chosen).
      output.out(listener.url);
      await untilSignal();
      await listener.close();
    } else {
      // stdout is the protocol channel: nothing else may be written there.
      const transport = createStdioTransport();
      await server().connect(transport);
      await Promise.race([transport.ended, untilSignal()]);
      // Answer the requests read before stdin ended or the signal came (bounded), then close.
      const unanswered = await transport.drain();
      if (unanswered > 0) output.err(`memfold mcp: ${unanswered} request(s) still running after ${DEFAULT_DRAIN_MS} ms were left unanswered`);
      await transport.close();
    }
    return 0;
  } catch (error) {
    output.err(`memfold mcp: ${errorMessage(error)}`);
    return 1;
  } finally {
    await backend.close().catch((error: unknown) => output.err(`memfold mcp: closing failed: ${errorMessage(error)}`));
  }
}
