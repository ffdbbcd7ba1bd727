/**
 * Scoping through the CLI: conversations in three namespaces of one home (one with the same id in each,
 * others with hostile ids), compacted, then `search`, `context` and `inspect` run in every scope must show
 * only that scope's content, whatever the conversation id or namespace given. The commands run through
 * the CLI's `main` in this process (argument parsing, configuration, output included); cli.e2e.test.ts
 * runs the bin itself, and fifty process starts would add a minute and a half without testing more.
 */
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runCli, type CliResult } from '../support/run-cli.js';
import { copyPgliteTemplateTo } from '../support/backends.js';

let home: string;
let cleanup: () => Promise<void>;

/**
 * One `memfold` command with `MEMFOLD_HOME` (and any other variables given) set for its duration. The
 * runner's DATABASE_URL and LANCEDB_URI are unset: the scopes live in this suite's own embedded home.
 */
async function memfold(args: string[], env: Record<string, string> = {}): Promise<CliResult> {
  return runCli(args, { env: { MEMFOLD_HOME: home, ...env } });
}

/** Each scope's own word appears in every one of its messages; `pelican` appears in every conversation. */
const SCOPES = [
  { namespace: 'default', conversation: 'alpha', token: 'tokdefaultalpha' },
  { namespace: 'red', conversation: 'alpha', token: 'tokredalpha' },
  { namespace: 'red', conversation: "x' OR '1'='1", token: 'tokredhostile' },
  { namespace: 'blue', conversation: 'alpha', token: 'tokbluealpha' },
  { namespace: 'blue', conversation: '%', token: 'tokbluepercent' },
  { namespace: 'blue', conversation: 'back\\slash*\nnewline', token: 'tokblueslash' },
] as const;
type Scope = (typeof SCOPES)[number];
const TOKENS = SCOPES.map((s) => s.token);
const labelsOf = new Map<Scope, Set<string>>();

function jsonl(scope: Scope, hourOffset: number): string {
  const lines: string[] = [];
  for (let i = 0; i < 30; i++) {
    const at = new Date(Date.UTC(2024, 4, 1, 9 + hourOffset, i)).toISOString();
    lines.push(
      JSON.stringify({
        conversation_id: scope.conversation,
        role: 'user',
        content: `Question ${i}: the pelican ledger ${scope.token} entry ${i}?`,
        created_at: at,
      }),
    );
    lines.push(
      JSON.stringify({ conversation_id: scope.conversation, role: 'assistant', content: `Answer ${i}: pelican ledger ${scope.token} entry ${i} is settled.` }),
    );
  }
  return lines.join('\n');
}

const nsArgs = (scope: Scope) => (scope.namespace === 'default' ? [] : ['--namespace', scope.namespace]);

function expectOnly(text: string, scope: Scope, what: string) {
  expect(text, `${what} of ${JSON.stringify(scope)}`).toContain(scope.token);
  for (const token of TOKENS.filter((t) => t !== scope.token)) expect(text, `${what} of ${JSON.stringify(scope)} shows ${token}`).not.toContain(token);
}

beforeAll(async () => {
  home = await mkdtemp(path.join(os.tmpdir(), 'memfold-scope-'));
  copyPgliteTemplateTo(path.join(home, 'pg'));
  cleanup = () => rm(home, { recursive: true, force: true });
  for (const [i, scope] of SCOPES.entries()) {
    const file = path.join(home, `scope-${i}.jsonl`);
    await writeFile(file, jsonl(scope, i));
    const imported = await memfold(['import', file, '--json', ...nsArgs(scope)]);
    expect(JSON.parse(imported.stdout), imported.stderr).toEqual({ imported: { [scope.conversation]: 60 }, skipped: { [scope.conversation]: 0 } });
    const compact = await memfold(['compact', scope.conversation, '--force', '--window', '2000', '--json', ...nsArgs(scope)]);
    expect(compact.code, compact.stderr).toBe(0);
    const result = JSON.parse(compact.stdout) as { status: string; batches: Array<{ label: string }>; resummarized: Array<{ label: string }> };
    expect(result.status).toBe('compacted');
    labelsOf.set(scope, new Set([...result.batches, ...result.resummarized].map((b) => b.label)));
  }
}, 300_000);
afterAll(async () => cleanup?.());

describe('memfold CLI scoping', () => {
  it('search finds only its own conversation in its own namespace', async () => {
    for (const scope of SCOPES) {
      const found = await memfold([
        'search',
        'pelican ledger entry settled',
        '--conversation',
        scope.conversation,
        '--limit',
        '20',
        '--json',
        ...nsArgs(scope),
      ]);
      expect(found.code, found.stderr).toBe(0);
      const { ok, output } = JSON.parse(found.stdout) as { ok: boolean; output: string };
      expect(ok).toBe(true);
      expectOnly(output, scope, 'search');
    }
  }, 180_000);

  it('context shows only its own conversation, clip-archive included', async () => {
    for (const scope of SCOPES) {
      const shown = await memfold(['context', scope.conversation, '--json', ...nsArgs(scope)]);
      expect(shown.code, shown.stderr).toBe(0);
      const messages = JSON.parse(shown.stdout) as Array<{ conversationId: string; kind: string; content: string }>;
      expect(messages[0]!.kind).toBe('clip_archive');
      expect(messages.every((m) => m.conversationId === scope.conversation)).toBe(true);
      expectOnly(shown.stdout, scope, 'context');
    }
  }, 180_000);

  it('inspect lists exactly the batches its own compaction archived', async () => {
    for (const scope of SCOPES) {
      const listed = await memfold(['inspect', scope.conversation, '--json', ...nsArgs(scope)]);
      expect(listed.code, listed.stderr).toBe(0);
      const report = JSON.parse(listed.stdout) as { conversationId: string; batches: Array<{ conversationId: string; label: string }> };
      expect(report.conversationId).toBe(scope.conversation);
      const batches = report.batches;
      expect(batches.every((b) => b.conversationId === scope.conversation)).toBe(true);
      expect(new Set(batches.map((b) => b.label))).toEqual(labelsOf.get(scope));
    }
  }, 180_000);

  it('an id or namespace that is not there finds nothing, however it is written', async () => {
    const probes: Array<[string, string[]]> = [
      ['%', ['--namespace', 'red']],
      ["x' OR '1'='1", ['--namespace', 'blue']],
      ['*', []],
      ['alph_', ['--namespace', 'blue']],
      ['alpha', ['--namespace', 'green']],
    ];
    for (const [conversation, ns] of probes) {
      const label = `${JSON.stringify(conversation)} ${ns.join(' ')}`;
      const found = JSON.parse((await memfold(['search', 'pelican ledger', '--conversation', conversation, '--json', ...ns])).stdout) as { output: string };
      expect(found.output, label).toMatch(/^No archived entry matches/);
      expect((await memfold(['context', conversation, '--json', ...ns])).stdout.trim(), label).toBe('[]');
      expect(JSON.parse((await memfold(['inspect', conversation, '--json', ...ns])).stdout), label).toEqual({
        conversationId: conversation,
        batches: [],
        liveSessions: [],
        liveTurns: [],
        summarizerCost: { recorded: 0, unrecorded: 0, byModel: {}, costUsd: 0, model: 'extractive', price: expect.objectContaining({ input: 0, output: 0 }) },
      });
    }
  }, 240_000);

  it('--namespace wins over MEMFOLD_NAMESPACE, which picks the scope without it; a hostile namespace is refused', async () => {
    const [, red, , blue] = SCOPES;
    expectOnly((await memfold(['context', 'alpha', '--json', '--namespace', 'red'], { MEMFOLD_NAMESPACE: 'blue' })).stdout, red, 'context');
    expectOnly((await memfold(['context', 'alpha', '--json'], { MEMFOLD_NAMESPACE: 'blue' })).stdout, blue, 'context');
    for (const namespace of ["' OR '1'='1", 'red%', 'a b', '../red', 'red\n']) {
      const refused = await memfold(['search', 'pelican', '--conversation', 'alpha', '--namespace', namespace]);
      expect(refused.code, namespace).toBe(1);
      expect(refused.stderr).toContain('namespace');
      expect(refused.stdout).toBe('');
    }
  }, 180_000);
});
