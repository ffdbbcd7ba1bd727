/**
 * The package as a user installs it: `npm pack`, unpacked into a fresh project's node_modules, a consumer file type
 * checked under strict settings with declarations emitted. Emitting declarations makes TypeScript name the type of
 * every exported value; a type a public function returns that the package does not export cannot be named (TS2742/
 * TS4023), so the check fails on it. The same consumer then runs under Node against the packed files.
 */
import { execFileSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, readdirSync, renameSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, expect, it } from 'vitest';

const ROOT = new URL('../..', import.meta.url).pathname;
let project: string;

const CONSUMER = `
import {
  createMemfold, toChatMessages, fromChatMessage, fromResponsesOutput, mcpServerFor, parseMemoryReadArgs, MemfoldError,
  type Memfold, type CompactionResult, type MemoryReadArgs, type ReconcileOutcome, type FunctionToolDefinition,
  type MemfoldOptions, type LanceArchiveOptions, type KyselyPersistenceOptions, type CompactionSettings, type CompactionConfig,
} from 'memfold';
import { memfoldMiddleware, toModelMessages, fromModelMessages, type MemfoldMiddlewareOptions } from 'memfold/ai-sdk';
import { memfoldSummarizationMiddleware, toLangChainMessages, fromLangChainMessages } from 'memfold/langchain';

// What the options of the public functions are called, for a user who builds them apart from the call.
export const lanceOptions: Partial<LanceArchiveOptions> = { uri: './lancedb', namespace: 'default' };
export const storeOptions: Partial<KyselyPersistenceOptions> = { namespace: 'default' };
export const compaction: Partial<CompactionSettings> = { contextWindow: 2_000 };
export const options: MemfoldOptions = { store: 'memory', env: {}, compaction };

export const memfold: Memfold = await createMemfold(options);
export const stored = await memfold.append('c', Array.from({ length: 60 }, (_, i) => ({
  role: i % 2 === 0 ? ('user' as const) : ('assistant' as const),
  content: \`Order ORD-\${500 + i} for Ada. \${'detail '.repeat(30)}\`,
})));
export const result: CompactionResult = await memfold.compact('c', { force: true });
export const context = await memfold.context('c');
export const history = await memfold.history('c');
export const usage = await memfold.usage('c');
export const memory = memfold.memoryRead('c');
export const chatTool = memory.definitionFor('chat', { strict: true });
export const responsesTool = memory.definitionFor('responses', { strict: true });
export const definition: FunctionToolDefinition = memory.definition;
export const answer = await memory.execute({ query: 'ORD-501' });
export const compactTool = memfold.compactTool('c');
export const messages = toChatMessages(context, { memoryAs: 'user' });
export const args: MemoryReadArgs = parseMemoryReadArgs({ query: 'ORD-501', limit: null });
export const outcomes: ReconcileOutcome[] = await memfold.reconcile();
export const conversations = await memfold.listConversations();
export const server = mcpServerFor(memfold, { conversation: 'c' });
export const summaryModel = memfold.summaryModel;
export const settings = memfold.compactor.settingsOf('c');
export const config: CompactionConfig = settings;
export const compress = memfold.compactor.compress;
export const fromChat = fromChatMessage({ role: 'assistant', content: null, refusal: null, tool_calls: [{ id: 'k1', type: 'function', function: { name: 'f', arguments: '{}' } }] });
export const fromResponses = fromResponsesOutput([{ type: 'function_call_output', call_id: 'k1', output: 'ok' }]);
export const calibration = await memfold.persistence.getTokenCalibration('c');
export const failure = new MemfoldError('invalid_argument', 'x');
// The subpaths: the AI SDK and LangChain middleware and converters, typed against the peers the consumer has.
export const middlewareOptions: MemfoldMiddlewareOptions = { memfold, conversationId: 'c' };
export const middleware = memfoldMiddleware(middlewareOptions);
export const agentMiddleware = memfoldSummarizationMiddleware({ memfold, conversationId: 'c', trigger: { tokens: 1_000 } });
export const modelMessages = toModelMessages(context);
export const backFromModel = fromModelMessages(modelMessages);
export const langchainMessages = toLangChainMessages(context);
export const backFromLangChain = fromLangChainMessages(langchainMessages);
await memfold.close();
console.log(JSON.stringify({ status: result.status, found: answer.output.includes('ORD-501'), messages: messages.length, conversations: conversations.length, subpaths: [typeof middleware.wrapGenerate, agentMiddleware.name, backFromModel.length > 0, backFromLangChain.length > 0] }));
`;

beforeAll(() => {
  project = mkdtempSync(path.join(os.tmpdir(), 'memfold-consumer-'));
  // dist is built by `npm test`'s pretest; --ignore-scripts packs it as it is.
  const [packed] = JSON.parse(
    execFileSync('npm', ['pack', '--json', '--ignore-scripts', '--pack-destination', project], { cwd: ROOT, encoding: 'utf8' }),
  ) as Array<{ filename: string }>;
  const modules = path.join(project, 'node_modules');
  mkdirSync(modules);
  execFileSync('tar', ['-xzf', path.join(project, packed!.filename), '-C', project]);
  renameSync(path.join(project, 'package'), path.join(modules, 'memfold'));
  // The package's dependencies, as npm would have installed them: links to this checkout's.
  for (const name of readdirSync(path.join(ROOT, 'node_modules'))) {
    if (name === '.bin' || name === 'memfold' || name.startsWith('.')) continue;
    symlinkSync(path.join(ROOT, 'node_modules', name), path.join(modules, name));
  }
  writeFileSync(path.join(project, 'package.json'), JSON.stringify({ name: 'consumer', private: true, type: 'module' }));
  writeFileSync(
    path.join(project, 'tsconfig.json'),
    JSON.stringify({
      compilerOptions: {
        target: 'ES2022',
        module: 'NodeNext',
        moduleResolution: 'NodeNext',
        strict: true,
        exactOptionalPropertyTypes: true,
        declaration: true,
        outDir: 'out',
        skipLibCheck: true,
        types: ['node'],
      },
      files: ['consumer.ts'],
    }),
  );
  writeFileSync(path.join(project, 'consumer.ts'), CONSUMER);
});
afterAll(() => rmSync(project, { recursive: true, force: true }));

it('packs only what a user needs', () => {
  const listing = execFileSync('tar', ['-tzf', path.join(project, readdirSync(project).find((f) => f.endsWith('.tgz'))!)], { encoding: 'utf8' });
  expect(listing).toContain('package/dist/src/index.d.ts');
  expect(listing).toContain('package/migrations/');
  expect(listing).toContain('package/dist/pglite-template.tar.gz');
  expect(listing).toContain('package/dist/pglite-template.json');
  expect(listing).not.toMatch(/package\/(test|src)\//);
});

it('a consumer type-checks against the packed types, every returned type nameable', () => {
  let out = '';
  try {
    execFileSync(process.execPath, [path.join(ROOT, 'node_modules/typescript/bin/tsc'), '-p', project], { cwd: project, encoding: 'utf8' });
  } catch (error) {
    out = String((error as { stdout?: string }).stdout ?? error);
  }
  expect(out).toBe('');
});

it('the compiled consumer runs against the packed files', () => {
  const printed = execFileSync(process.execPath, [path.join(project, 'out/consumer.js')], { cwd: project, encoding: 'utf8', env: { PATH: process.env.PATH } });
  expect(JSON.parse(printed.trim().split('\n').at(-1)!)).toEqual({
    status: 'compacted',
    found: true,
    messages: expect.any(Number),
    conversations: 1,
    subpaths: ['function', 'MemfoldSummarizationMiddleware', true, true],
  });
});

it('an empty home opened from the packed package starts from the template it ships, not initdb', () => {
  // initdb draws a new system identifier; a directory unpacked from the template has the template's.
  const script = `
    import { readFileSync } from 'node:fs';
    import { createMemfold } from 'memfold';
    import { PGlite } from '@electric-sql/pglite';
    const home = process.argv[1];
    const memfold = await createMemfold({ env: { MEMFOLD_HOME: home } });
    await memfold.close();
    const pglite = await PGlite.create(home + '/pg');
    const { rows } = await pglite.query('select system_identifier::text as id from pg_control_system()');
    await pglite.close();
    const manifest = JSON.parse(readFileSync('node_modules/memfold/dist/pglite-template.json', 'utf8'));
    console.log(JSON.stringify({ id: rows[0].id, template: manifest.systemIdentifier }));
  `;
  const home = path.join(project, 'home');
  const printed = execFileSync(process.execPath, ['--input-type=module', '-e', script, home], {
    cwd: project,
    encoding: 'utf8',
    env: { PATH: process.env.PATH },
  });
  const { id, template } = JSON.parse(printed.trim().split('\n').at(-1)!) as { id: string; template: string };
  expect(id).toBe(template);
});
