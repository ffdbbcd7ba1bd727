/**
 * One conversation-id rule at every boundary: the library, the live store, the compact tool, the MCP scope and live
 * settings refuse the same ids (blank, U+0000, a lone surrogate, over 1 KiB, not a string), each
 * naming its field, and accept the same ids.
 */
import { describe, expect, it } from 'vitest';
import { conversationIdProblem, conversationIdSchema, requireConversationId } from '../../src/conversation/conversation-id.js';
import { parseWithSchema } from '../../src/conversation/schema-issues.js';
import { InvalidArgumentError, InvalidConfigError } from '../../src/errors.js';
import { mcpScope } from '../../src/mcp/mcp-scope.js';
import { createMemfold } from '../../src/memfold.js';
import { createInMemoryPersistence } from '../../src/persistence/in-memory/in-memory-persistence.js';
import { createCompactTool } from '../../src/tools/compact-tool.js';

const BAD: Array<[string, unknown]> = [
  ['empty', ''],
  ['blank', '  \t'],
  ['U+0000', 'a\u0000b'],
  ['a lone surrogate', 'a\ud800'],
  ['over 1 KiB of UTF-8', 'é'.repeat(513)],
  ['a number', 7],
  ['null', null],
];

/** A conversation id the store accepts, so every boundary accepts it: long (600 characters), with spaces. */
const LONG_ID = `a conversation ${'x'.repeat(585)}`;

async function fieldOf(attempt: () => unknown): Promise<string | undefined> {
  try {
    await attempt();
  } catch (error) {
    if (error instanceof InvalidArgumentError || error instanceof InvalidConfigError) return error.field;
    throw error;
  }
  return undefined;
}

describe('the conversation-id rule', () => {
  it.each(BAD)('refuses %s, naming the field, as a function and as a schema', (_kind, id) => {
    expect(conversationIdProblem(id)).toBeDefined();
    expect(() => requireConversationId(id, 'commit.conversationId')).toThrow(/^Invalid argument commit\.conversationId: must /);
    expect(() => parseWithSchema(conversationIdSchema, id, { prefix: 'conversation' })).toThrow(/^Invalid argument conversation: must /);
  });

  it('accepts any other string that fits an index key', () => {
    for (const id of ['a', ' padded ', LONG_ID, 'é'.repeat(512), '日本語']) expect(requireConversationId(id)).toBe(id);
  });

  it.each(BAD)('every boundary refuses %s naming its field', async (_kind, id) => {
    const persistence = createInMemoryPersistence();
    const memfold = await createMemfold({ store: 'memory', env: {} });
    try {
      const target = { usage: async () => ({ tokens: 0, targetTokens: 0 }), compact: async () => ({}) as never, tokensAfterLastCompaction: () => undefined };
      const attempts: Array<[string, () => unknown]> = [
        ['conversationId', () => persistence.append(id as string, [{ role: 'user', content: 'a' }])],
        ['conversationId', () => persistence.loadHistory(id as string)],
        ['conversationId', () => memfold.usage(id as string)],
        ['conversationId', () => memfold.configure({ contextWindow: 8_000 }, { conversationId: id as string })],
        ['conversationId', () => createCompactTool(target, id as string, { floorTokens: 0, minNewTokens: 0 })],
        ['conversation', () => mcpScope({ conversation: id as string })],
        ['allow[1]', () => mcpScope({ allow: ['a', id as string] })],
      ];
      for (const [i, [field, attempt]] of attempts.entries()) expect(await fieldOf(attempt), `attempt ${i}`).toBe(field);
      // A compaction answers with its failure rather than throwing.
      expect(await memfold.compactor.compactStored(id as string)).toMatchObject({
        status: 'failed',
        error: expect.stringMatching(/^Invalid argument conversationId: /),
      });
    } finally {
      await memfold.close();
    }
  });

  it('an id the store takes is taken by the MCP scope and the tools too', async () => {
    expect(mcpScope({ conversation: LONG_ID }).conversations).toEqual([LONG_ID]);
    const memfold = await createMemfold({ store: 'memory', env: {} });
    try {
      await memfold.append(LONG_ID, [{ role: 'user', content: 'hello' }]);
      expect((await memfold.usage(LONG_ID)).conversationId).toBe(LONG_ID);
      expect((await memfold.configure({ contextWindow: 8_000 }, { conversationId: LONG_ID })).contextWindow).toBe(8_000);
    } finally {
      await memfold.close();
    }
  });
});
