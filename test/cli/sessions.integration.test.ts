/**
 * Sessions through the CLI, in this process, on a PGlite home: `import` reads `session_id` (or `sessionId`), and an
 * id re-sent under another session is refused; `inspect` shows the sessions each
 * batch covers and the live sessions, as text and as `--json`.
 */
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { InspectReport } from '../../src/cli/commands/inspect.js';
import { copyPgliteTemplateTo } from '../support/backends.js';
import { runCli } from '../support/run-cli.js';

let home: string;
const memfold = (...args: string[]) => runCli([...args, '--home', home]);

async function file(name: string, lines: object[]): Promise<string> {
  const at = path.join(home, name);
  await writeFile(at, `${lines.map((line) => JSON.stringify(line)).join('\n')}\n`);
  return at;
}

/** Three sessions of eight messages: two named (`day-1` snake_case, `day-2` camelCase), one without a name, a day later. */
function lines(): object[] {
  const out: object[] = [];
  for (let day = 1; day <= 3; day++) {
    for (let i = 0; i < 8; i++) {
      const session = day === 1 ? { session_id: 'day-1' } : day === 2 ? { sessionId: 'day-2' } : {};
      out.push({
        id: `d${day}-${i}`,
        role: i % 2 === 0 ? 'user' : 'assistant',
        content: `Day ${day} message ${i} about the garden and the heron. ${'more words to fill the window '.repeat(12)}`,
        created_at: new Date(Date.UTC(2024, 3, day, 9, i)).toISOString(),
        ...session,
      });
    }
  }
  return out;
}

beforeAll(async () => {
  home = await mkdtemp(path.join(os.tmpdir(), 'memfold-sessions-cli-'));
  copyPgliteTemplateTo(path.join(home, 'pg'));
});
afterAll(() => rm(home, { recursive: true, force: true }));

describe('sessions in the CLI', () => {
  it('import reads session ids; another session under a stored id refuses the file naming the line', async () => {
    const imported = await memfold('import', await file('a.jsonl', lines()), '--conversation', 'g');
    expect(imported.code, imported.stderr).toBe(0);

    const context = JSON.parse((await memfold('context', 'g', '--json')).stdout) as Array<{ id: string; sessionId?: string }>;
    expect(context.map((m) => m.sessionId)).toEqual([...Array(8).fill('day-1'), ...Array(8).fill('day-2'), ...Array(8).fill(undefined)]);

    const moved = await memfold('import', await file('b.jsonl', [{ ...(lines()[0] as object), session_id: 'day-9' }]), '--conversation', 'g');
    expect(moved.code).toBe(1);
    expect(moved.stderr).toContain('line 1.id: "d1-0" is already used in conversation "g" by another message');
  });

  it('eval refuses --keep-sessions without --session-scope fixedCount, and an unknown scope, naming the flag', async () => {
    const keep = await runCli(['eval', 'none.json', '--dataset', 'locomo', '--keep-sessions', '3']);
    expect(keep.code).toBe(2);
    expect(keep.stderr).toContain('--keep-sessions: needs --session-scope fixedCount');
    const scope = await runCli(['eval', 'none.json', '--dataset', 'locomo', '--session-scope', 'weekly']);
    expect(scope.code).toBe(2);
    expect(scope.stderr).toContain('--session-scope: must be one of none, fixedCount, tokenBudget (got "weekly")');
  });

  it('inspect shows the live sessions, and after a compaction the sessions of each batch', async () => {
    const before = await memfold('inspect', 'g');
    expect(before.code, before.stderr).toBe(0);
    expect(before.stdout).toContain('conversation g has no archived batches');
    expect(before.stdout).toContain('live sessions: 3 (auto-: no session id given; a pause over 30 minutes starts one)');
    expect(before.stdout).toMatch(/ {2}day-1 {2}2024-04-01T09:00Z \.\. 2024-04-01T09:07Z {2}8 messages {2}seq 1\.\.8/);
    expect(before.stdout).toContain('  auto-2024-04-03T09:00:00.000Z  2024-04-03T09:00Z .. 2024-04-03T09:07Z  8 messages  seq 17..24');
    expect(before.stdout).toContain('live turns: 12 (the newest: seq 23..24)');

    const compacted = await memfold('compact', 'g', '--force', '--window', '4000');
    expect(compacted.code, compacted.stderr).toBe(0);
    const report = JSON.parse((await memfold('inspect', 'g', '--json')).stdout) as InspectReport;
    expect(report.batches.length).toBeGreaterThan(0);
    const archivedSessions = [...new Set(report.batches.flatMap((b) => b.sessions ?? []))];
    const live = report.liveSessions.map((s) => s.id);
    // Every session is archived, live, or both (cut in two); the first turn of day-1 stays live. An unnamed session
    // cut in two is named after its first message on each side.
    const all = [...new Set([...archivedSessions, ...live])];
    expect(all.filter((id) => !id.startsWith('auto-')).sort()).toEqual(['day-1', 'day-2']);
    expect(all.filter((id) => id.startsWith('auto-')).every((id) => id.startsWith('auto-2024-04-03T09:0'))).toBe(true);
    expect(live[0]).toBe('day-1');
    expect(report.batches.every((b) => (b.sessions ?? []).length > 0 && !('content' in b))).toBe(true);
    // The live turns tile the live conversation: each opens with a user message, in seq order, up to the last row.
    const liveRows = JSON.parse((await memfold('context', 'g', '--json')).stdout) as Array<{ seq: number; role: string; kind?: string }>;
    const rows = liveRows.filter((m) => m.kind !== 'clip_archive' && m.role !== 'system');
    const userAt = rows.flatMap((m, i) => (m.role === 'user' ? [i] : []));
    expect(report.liveTurns.map((t) => [t.firstSeq, t.lastSeq])).toEqual(userAt.map((at, k) => [rows[at]!.seq, rows[(userAt[k + 1] ?? rows.length) - 1]!.seq]));
    expect(report.liveTurns.every((t) => t.opensWithUser)).toBe(true);

    // The gap rule follows --session-gap: 0 turns it off, so the unnamed day continues the session before it.
    const text = await memfold('inspect', 'g', '--session-gap', '0');
    const first = report.batches[0]!;
    expect(text.stdout).toContain(`${first.sessions!.length === 1 ? 'session' : 'sessions'} ${first.sessions!.join(', ')}`);
    expect(text.stdout).not.toContain('live sessions: 3');
    expect(text.stdout).not.toContain('a pause over');
  });
});
