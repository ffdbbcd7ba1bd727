/** An MCP server's scope and access rules: who may call it, which conversations a call reaches, which tools it lists. */
import { describe, expect, it } from 'vitest';
import { authorized, checkHttpAccess, isLoopback } from '../../src/mcp/mcp-http-auth.js';
import { mcpScope, scopedConversation } from '../../src/mcp/mcp-scope.js';
import { memfoldBackend } from '../../src/mcp/mcp-backends.js';
import { callMcpTool, mcpTools, type McpBackend } from '../../src/mcp/mcp-tools.js';
import { createMemfold } from '../../src/memfold.js';
import { orderChat } from '../support/messages.js';

describe('mcpScope', () => {
  it('needs one conversation or an allow-list, naming the field that is wrong', () => {
    expect(() => mcpScope({})).toThrow(/conversation/);
    expect(() => mcpScope({ conversation: 'a', allow: ['b'] })).toThrow(/allow/);
    expect(() => mcpScope({ allow: ['a', ' '] })).toThrow(/allow\[1\]/);
    expect(() => mcpScope({ conversation: '' })).toThrow(/conversation/);
  });

  it('one conversation: a call names none, or that one', () => {
    const scope = mcpScope({ conversation: 'a' });
    expect(scopedConversation(scope, undefined)).toBe('a');
    expect(scopedConversation(scope, null)).toBe('a');
    expect(scopedConversation(scope, 'a')).toBe('a');
    expect(() => scopedConversation(scope, 'b')).toThrow(/^Refused/);
  });

  it('an allow-list: a call must name one of it', () => {
    const scope = mcpScope({ allow: ['a', 'b', 'a'] });
    expect(scope.conversations).toEqual(['a', 'b']);
    expect(scopedConversation(scope, 'b')).toBe('b');
    expect(() => scopedConversation(scope, undefined)).toThrow(/required/);
    expect(() => scopedConversation(scope, 'c')).toThrow(/not in this server's scope/);
    expect(() => scopedConversation(scope, ['a'])).toThrow(/required/);
  });
});

describe('HTTP access', () => {
  it('a token is required off loopback, and must not be guessable', () => {
    expect(() => checkHttpAccess('127.0.0.1', undefined)).not.toThrow();
    expect(() => checkHttpAccess('0.0.0.0', undefined)).toThrow(/--token/);
    expect(() => checkHttpAccess('192.168.1.5', 'short')).toThrow(/at least 16/);
    expect(() => checkHttpAccess('192.168.1.5', 'a-long-enough-secret')).not.toThrow();
    expect(isLoopback('127.0.0.53')).toBe(true);
    expect(isLoopback('10.0.0.1')).toBe(false);
  });

  it('the bearer token must match exactly', () => {
    const token = 'a-long-enough-secret';
    expect(authorized(`Bearer ${token}`, token)).toBe(true);
    expect(authorized(`bearer ${token}`, token)).toBe(true);
    expect(authorized(`Bearer ${token}x`, token)).toBe(false);
    expect(authorized(`Basic ${token}`, token)).toBe(false);
    expect(authorized(undefined, token)).toBe(false);
    expect(authorized(undefined, undefined)).toBe(true);
  });
});

describe('callMcpTool', () => {
  it('lists compact only with write access, and context not on the archive alone', () => {
    const scope = mcpScope({ conversation: 'a' });
    expect(mcpTools(scope, 'archive').map((t) => t.name)).toEqual(['memory_read']);
    expect(mcpTools(scope, 'read').map((t) => t.name)).toEqual(['memory_read', 'context']);
    expect(mcpTools(scope, 'write').map((t) => t.name)).toEqual(['memory_read', 'context', 'compact']);
  });

  it('refuses out of scope and unlisted tools before opening anything; answers in scope from memfold', async () => {
    const memfold = await createMemfold({ store: 'memory', env: {}, compaction: { contextWindow: 2_000 } });
    await memfold.append('a', orderChat(30));
    await memfold.compact('a', { force: true });
    let opened = 0;
    const backend = async (): Promise<McpBackend> => {
      opened++;
      return memfoldBackend(memfold, 'read');
    };
    const scope = mcpScope({ conversation: 'a' });
    const call = (name: string, args: unknown) => callMcpTool(name, args, { scope, access: 'read', backend });

    expect((await call('compact', {})).content[0]!.text).toMatch(/Unknown tool/);
    expect((await call('memory_read', { conversation: 'b', query: 'ORD-501' })).isError).toBe(true);
    expect((await call('memory_read', '{not json')).isError).toBe(true);
    expect(opened).toBe(0);

    const found = await call('memory_read', JSON.stringify({ query: 'ORD-501' }));
    expect(found.isError).toBe(false);
    expect(found.content[0]!.text).toContain('ORD-501');
    expect((await call('context', { extra: 1 })).content[0]!.text).toMatch(/takes no arguments/);
    expect((await call('context', {})).content[0]!.text).toContain('clip-archive');
    await memfold.close();
  });
});
