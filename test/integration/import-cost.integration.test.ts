/**
 * Importing memfold loads only what every use needs. The backends and the protocol stacks (pg-boss with
 * OpenTelemetry, the MCP SDK with ajv and zod-to-json-schema, the tokenizer, chrono-node, PGlite, LanceDB) load
 * when the function that needs them is first called, and zod when something is first validated. Checked on the compiled package (`dist/`, built before the
 * integration tests) in a fresh `node` whose module hook lists every file loaded, `import` and `require` alike.
 */
import { execFile } from 'node:child_process';
import path from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { promisify } from 'node:util';
import { describe, expect, it } from 'vitest';

const exec = promisify(execFile);
const ROOT = path.resolve(fileURLToPath(new URL('../..', import.meta.url)));
const ENTRY = pathToFileURL(path.join(ROOT, 'dist/src/index.js')).href;

/** Packages a program pays for only when it uses them. */
const ON_DEMAND = [
  'pg-boss',
  '@opentelemetry/api',
  '@modelcontextprotocol/sdk',
  'zod-to-json-schema',
  'ajv',
  'js-tiktoken',
  'chrono-node',
  '@electric-sql/pglite',
  '@lancedb/lancedb',
  'apache-arrow',
  'kysely',
  'pg',
  'openai',
  'zod',
];

/**
 * memfold's own modules (`memfold:` and their path in `dist/src/`) and Node's built-ins (`node:`) that load with the
 * first call that needs them: the composition root (`createMemfold`), a compactor's steps (its first compaction),
 * memory_read's search, the extractive summary, the in-memory store's operations, the configured adapters, and Node's
 * HTTP server (`serveMcpHttp`).
 */
const ON_FIRST_CALL = [
  'memfold:memfold.js',
  'memfold:compaction/compactor-steps.js',
  'memfold:tools/memory-read-search.js',
  'memfold:summarizer/extractive/extractive-summary.js',
  'memfold:persistence/in-memory/in-memory-operations.js',
  'memfold:configured-adapters.js',
  'memfold:mcp/mcp-http.js',
  'node:http',
];

/**
 * A child that imports the package, then runs `then` (a script body with `memfold` in scope), printing what was loaded
 * before and after: packages by name, memfold's own modules as `memfold:<path>`, Node's built-ins as `node:<name>`.
 */
function childScript(then: string): string {
  return `
import { registerHooks } from 'node:module';
const loaded = new Set();
registerHooks({
  load(url, context, next) {
    const name = /node_modules\\/((?:@[^/]+\\/)?[^/]+)\\//.exec(url)?.[1];
    const own = /\\/dist\\/src\\/(.+)$/.exec(url)?.[1];
    if (name) loaded.add(name);
    else if (own) loaded.add('memfold:' + own);
    else if (url.startsWith('node:')) loaded.add(url);
    return next(url, context);
  },
});
const memfold = await import(${JSON.stringify(ENTRY)});
const atImport = [...loaded].sort();
const result = await (async () => { ${then} })();
console.log(JSON.stringify({ atImport, after: [...loaded].sort(), result }));
`;
}

async function runChild(then = 'return null;'): Promise<{ atImport: string[]; after: string[]; result: unknown; stderr: string }> {
  const { stdout, stderr } = await exec(process.execPath, ['--input-type=module', '-e', childScript(then)], {
    cwd: ROOT,
    env: { ...process.env, NODE_OPTIONS: '' },
  });
  return { ...JSON.parse(stdout.trim().split('\n').pop()!), stderr };
}

describe("import('memfold')", () => {
  it('loads none of the backends or protocol stacks', async () => {
    const { atImport, stderr } = await runChild();
    expect(atImport.filter((name) => ON_DEMAND.includes(name))).toEqual([]);
    expect(stderr).toBe('');
  });

  it('createMcpServer loads the MCP SDK then, the same module an import gets, quietly', async () => {
    const { atImport, after, result, stderr } = await runChild(`
      const server = memfold.mcpServerFor({ memoryRead: async () => '', context: async () => '', compactTool: () => undefined }, { conversation: 'c1' });
      const { Server } = await import('@modelcontextprotocol/sdk/server/index.js');
      return server instanceof Server;
    `);
    expect(atImport).not.toContain('@modelcontextprotocol/sdk');
    expect(after).toContain('@modelcontextprotocol/sdk');
    expect(result).toBe(true);
    expect(stderr).toBe('');
  });

  it('openJobBoss loads pg-boss then', async () => {
    const { after, result } = await runChild(`
      try {
        await memfold.openJobBoss({ connectionString: 'postgres://nobody@127.0.0.1:1/none', namespace: 'n' });
        return 'opened';
      } catch (error) {
        return 'refused';
      }
    `);
    expect(result).toBe('refused');
    expect(after).toContain('pg-boss');
  });

  it('loads zod with the first check, the same module an import gets, and the exported schemas work as zod schemas', async () => {
    const { atImport, after, result, stderr } = await runChild(`
      const { z } = await import('zod');
      const definitionLoadsNoZod = memfold.COMPACT_DEFINITION.function.name === 'compact';
      const refused = memfold.compactionSettingsSchema.safeParse({ contextWindow: 1 }).success;
      const nested = z.object({ compaction: memfold.compactionSettingsSchema }).safeParse({ compaction: memfold.DEFAULT_COMPACTION_SETTINGS }).success;
      return {
        definitionLoadsNoZod,
        refused,
        nested,
        options: memfold.memfoldOptionsSchema.safeParse({ store: 'memory' }).success,
        isZod: memfold.memfoldOptionsSchema instanceof z.ZodObject,
        parameters: memfold.MEMORY_READ_DEFINITION.function.parameters.type,
        frozen: Object.isFrozen(memfold.MEMORY_READ_DEFINITION.function.parameters),
        args: memfold.parseCompactArgs({ focus: ' the plan ' }),
      };
    `);
    expect(atImport).not.toContain('zod');
    expect(after).toContain('zod');
    expect(result).toEqual({
      definitionLoadsNoZod: true,
      refused: false,
      nested: true,
      options: true,
      isZod: true,
      parameters: 'object',
      frozen: true,
      args: { focus: 'the plan' },
    });
    expect(stderr).toBe('');
  });

  it("loads memfold's composition root, the compaction steps and the stores' operations with the first calls, not before", async () => {
    const { atImport, after, result, stderr } = await runChild(`
      const m = await memfold.createMemfold({ store: 'memory', compaction: { contextWindow: 4096, keepRecentMessages: 1, keepRecentTokens: 0, keepFirstTurns: 0 } });
      const turns = Array.from({ length: 8 }, (_, i) => ({ role: i % 2 ? 'assistant' : 'user', content: 'turn ' + i + ' about the harbour plan ' + 'x'.repeat(400) }));
      await m.append('c1', turns);
      const compacted = await m.compact('c1', { force: true });
      const read = await m.memoryRead('c1').execute({ query: 'harbour plan' });
      await m.close();
      return { status: compacted.status, read: read.ok };
    `);
    expect(atImport.filter((name) => ON_FIRST_CALL.includes(name))).toEqual([]);
    expect(ON_FIRST_CALL.filter((name) => !after.includes(name))).toEqual(['memfold:mcp/mcp-http.js', 'node:http']);
    expect(result).toEqual({ status: 'compacted', read: true });
    expect(stderr).toBe('');
  });
});
