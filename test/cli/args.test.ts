import { describe, expect, it } from 'vitest';
import { parseArgs, usage } from '../../src/cli/args.js';
import { parseJsonlMessages, groupByConversation } from '../../src/cli/commands/import-jsonl.js';
import { buildBatchTree, formatBatchTree } from '../../src/cli/batch-tree.js';
import { generateDemoConversation, PLANTED_FACTS } from '../../src/cli/demo/demo-conversation.js';

describe('parseArgs', () => {
  it('parses positionals, typed flags and --flag=value', () => {
    expect(parseArgs(['search', 'lock code', '--conversation', 'c1', '--limit=3', '--json'])).toEqual({
      command: 'search',
      positionals: { query: 'lock code' },
      flags: { conversation: 'c1', limit: 3, json: true },
    });
    expect(parseArgs(['resummarize', 'c1', '--depth', '0'])).toMatchObject({ positionals: { conversation: 'c1' }, flags: { depth: 0 } });
    expect(parseArgs([])).toEqual({ command: 'help' });
    expect(parseArgs(['compact', '--help'])).toEqual({ command: 'help', topic: 'compact' });
  });

  it.each([
    [['frobnicate'], 'command'],
    [['search', 'q'], '--conversation'],
    [['search', 'q', '--conversation'], '--conversation'],
    [['resummarize', 'c1', '--depth', 'two'], '--depth'],
    [['context'], '<conversation>'],
    [['context', 'a', 'b'], 'b'],
    [['inspect', 'c', '--colour'], '--colour'],
    [['compact', 'c', '--force=yes'], '--force'],
  ])('refuses %j naming %s', (argv, field) => {
    expect(() => parseArgs(argv)).toThrow(new RegExp(`Invalid argument ${field.replace(/[<>-]/g, (c) => `\\${c}`)}:`));
  });

  it.each([
    [['resummarize', 'c1', '--depth', '-1'], '--depth: must be an integer >= 0 (got -1)'],
    [['resummarize', 'c1', '--depth', '2.5'], '--depth: must be an integer >= 0 (got "2.5")'],
    [['search', 'q', '--conversation', 'c', '--limit', '0'], '--limit: must be an integer >= 1 (got 0)'],
    [['search', 'q', '--conversation', 'c', '--kind', 'batch'], '--kind: must be summary or transcript (got "batch")'],
    [['compact', 'c', '--window', '100'], '--window: must be an integer >= 256 (got 100)'],
    [['demo', '--turns', '0'], '--turns: must be an integer >= 1 (got 0)'],
    [['eval', 'f', '--dataset', 'bogus'], '--dataset: must be one of locomo, longmemeval, jsonl, tau-bench, swe-agent (got "bogus")'],
    [['eval', 'f', '--dataset', 'locomo', '--conversations', '0'], '--conversations: must be an integer >= 1 (got 0)'],
  ])('checks %j against the flag schema: %s', (argv, message) => {
    expect(() => parseArgs(argv)).toThrow(`Invalid argument ${message}`);
  });

  it('types the values its schemas accept', () => {
    expect(parseArgs(['search', 'q', '--conversation', 'c', '--kind', 'summary', '--limit=7', '--depth', '0'])).toMatchObject({
      flags: { kind: 'summary', limit: 7, depth: 0 },
    });
  });

  it('every command takes --home and --namespace, and the usage says so', () => {
    for (const command of ['import', 'compact', 'context', 'inspect', 'resummarize', 'migrate', 'demo', 'reconcile']) {
      const argv = { import: ['f.jsonl'], compact: ['c'], context: ['c'], inspect: ['c'], resummarize: ['c', '--depth', '0'] }[command as 'import'] ?? [];
      expect(parseArgs([command, ...argv, '--namespace', 'tenant-a', '--home=/tmp/h'])).toMatchObject({
        command,
        flags: { namespace: 'tenant-a', home: '/tmp/h' },
      });
    }
    expect(parseArgs(['search', 'q', '--conversation', 'c', '--namespace=ns.1'])).toMatchObject({ flags: { namespace: 'ns.1', conversation: 'c' } });
    expect(() => parseArgs(['context', 'c', '--namespace'])).toThrow(/Invalid argument --namespace: needs a value/);
    expect(usage()).toContain('[--namespace <name>]');
    expect(usage('inspect')).toContain('--namespace <name>');
  });

  it('usage lists every command', () => {
    for (const command of ['demo', 'import', 'compact', 'context', 'search', 'inspect', 'resummarize', 'migrate']) expect(usage()).toContain(command);
    expect(usage('search')).toContain('--conversation <value> (required)');
  });
});

describe('import lines', () => {
  it('reads OpenAI-style JSONL with tool calls and groups by conversation', () => {
    const text = [
      '{"conversation_id":"a","role":"user","content":"hi","created_at":"2024-01-01T10:00:00+02:00"}',
      '',
      '{"conversation_id":"a","role":"assistant","content":null,"tool_calls":[{"id":"c1","type":"function","function":{"name":"f","arguments":"{}"}}]}',
      '{"role":"tool","tool_call_id":"c1","content":"ok"}',
    ].join('\n');
    const lines = parseJsonlMessages(text);
    expect(lines[0]!.message.createdAt).toBe('2024-01-01T08:00:00.000Z');
    expect(lines[1]!.message.toolCalls![0]!.id).toBe('c1');
    const groups = groupByConversation(lines, 'fallback');
    expect([...groups.keys()]).toEqual(['a', 'fallback']);
    expect(() => groupByConversation(lines, undefined)).toThrow(/--conversation/);
  });

  it('reads a session id as session_id or sessionId (snake_case first), and no session when the line has none', () => {
    const lines = parseJsonlMessages(
      [
        '{"role":"user","content":"a","session_id":"s1"}',
        '{"role":"user","content":"b","sessionId":"s2"}',
        '{"role":"user","content":"c","session_id":"s3","sessionId":"ignored"}',
        '{"role":"user","content":"d","session_id":null}',
      ].join('\n'),
    );
    expect(lines.map((line) => line.message.sessionId)).toEqual(['s1', 's2', 's3', undefined]);
    expect('sessionId' in lines[3]!.message).toBe(false);
  });

  it.each([
    ['{"role":"user"', 'line 1'],
    ['{"role":"robot","content":"x"}', 'line 1.role'],
    ['{"role":"user","content":"a"}\n{"role":"user","content":5}', 'line 2.content'],
    ['{"role":"user","content":"a","created_at":"yesterday"}', 'line 1.created_at'],
    ['{"role":"user","content":"a","session_id":""}', 'line 1.session_id'],
    ['{"role":"user","content":"a","sessionId":7}', 'line 1.sessionId'],
  ])('refuses %j naming %s', (text, field) => {
    expect(() => parseJsonlMessages(text)).toThrow(`Invalid argument ${field}:`);
  });
});

describe('demo conversation', () => {
  it('is deterministic, several hundred messages, with every planted fact in it once', () => {
    const a = generateDemoConversation();
    expect(generateDemoConversation()).toEqual(a);
    expect(a.length).toBeGreaterThan(300);
    for (const fact of PLANTED_FACTS) expect(a.filter((m) => m.content.includes(fact.expect))).toHaveLength(1);
    const times = a.map((m) => m.createdAt as string);
    expect([...times].sort()).toEqual(times);
  });
});

describe('batch tree', () => {
  it('nests batches under the batch that covers them', () => {
    const base = { kind: 'summary' as const, conversationId: 'c', content: '', sourceIds: [], operationId: 'o', count: 1 };
    const tree = buildBatchTree([
      { ...base, label: 'p', depth: 1, start: '2024-01-01T00:00:00.000Z', end: '2024-01-03T00:00:00.000Z' },
      { ...base, label: 'b', depth: 0, start: '2024-01-02T00:00:00.000Z', end: '2024-01-03T00:00:00.000Z', parentLabel: 'p' },
      { ...base, label: 'a', depth: 0, start: '2024-01-01T00:00:00.000Z', end: '2024-01-02T00:00:00.000Z', parentLabel: 'p' },
      { ...base, label: 'z', depth: 0, start: '2024-01-04T00:00:00.000Z', end: '2024-01-05T00:00:00.000Z' },
    ]);
    expect(tree.map((n) => [n.batch.label, n.children.map((c) => c.batch.label)])).toEqual([
      ['p', ['a', 'b']],
      ['z', []],
    ]);
    expect(formatBatchTree(tree).split('\n')[1]).toMatch(/^ {2}depth 0 .* a$/);
  });

  it('shows the sessions of each batch: up to three by name, more as the first .. the last (how many)', () => {
    const base = { kind: 'summary' as const, conversationId: 'c', sourceIds: [], operationId: 'o', count: 1, start: '2024-01-01T00:00:00.000Z' };
    const lines = formatBatchTree(
      buildBatchTree([
        { ...base, label: 'a', depth: 0, end: '2024-01-01T00:00:00.000Z', sessions: ['mon'] },
        { ...base, label: 'b', depth: 0, end: '2024-01-02T00:00:00.000Z', sessions: ['mon', 'tue\nforged'] },
        { ...base, label: 'c', depth: 1, end: '2024-01-03T00:00:00.000Z', sessions: ['s1', 's2', 's3', 's4', 's5'] },
        { ...base, label: 'd', depth: 0, end: '2024-01-04T00:00:00.000Z' },
      ]),
    ).split('\n');
    expect(lines).toEqual([
      'depth 0  2024-01-01T00:00Z .. 2024-01-01T00:00Z  1 messages  a  session mon',
      'depth 0  2024-01-01T00:00Z .. 2024-01-02T00:00Z  1 messages  b  sessions mon, "tue\\nforged"',
      'depth 1  2024-01-01T00:00Z .. 2024-01-03T00:00Z  1 batches  c  sessions s1 .. s5 (5)',
      'depth 0  2024-01-01T00:00Z .. 2024-01-04T00:00Z  1 messages  d',
    ]);
  });

  it('keeps a label holding a line break (from the conversation id) on its own line', () => {
    const batch = {
      kind: 'summary' as const,
      conversationId: 'c',
      content: '',
      sourceIds: [],
      operationId: 'o',
      count: 1,
      depth: 0,
      start: '2024-01-01T00:00:00.000Z',
      end: '2024-01-01T00:00:00.000Z',
    };
    const text = formatBatchTree(buildBatchTree([{ ...batch, label: 'compaction-batch-a\ndepth 9 forged\u2028x-2024' }]));
    expect(text.split(/\r\n|[\n\r\u2028\u2029\u0085]/)).toHaveLength(1);
    expect(text).toContain('"compaction-batch-a\\ndepth 9 forged\\u2028x-2024"');
  });
});
