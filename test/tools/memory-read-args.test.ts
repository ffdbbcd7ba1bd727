import { describe, expect, expectTypeOf, it } from 'vitest';
import { MEMORY_READ_DEFINITION } from '../../src/tools/memory-read.js';
import { type MemoryReadArgs, memoryReadParameters, parseMemoryReadArgs } from '../../src/tools/memory-read-args.js';

describe('memory_read arguments', () => {
  it('accept a query or a label with optional filters, as an object or the JSON a model sends', () => {
    expect(parseMemoryReadArgs({ query: 'lock code' })).toEqual({ query: 'lock code', limit: 5 });
    expect(parseMemoryReadArgs('{"label":"compaction-batch-c-2024-01-01T00:00:00.000Z","limit":2}')).toEqual({
      label: 'compaction-batch-c-2024-01-01T00:00:00.000Z',
      limit: 2,
    });
    expect(parseMemoryReadArgs({ query: 'x', depth: 1, kind: 'transcript', from: '2024-01-01', to: '2024-02-01T10:00:00Z', limit: 20 })).toEqual({
      query: 'x',
      depth: 1,
      kind: 'transcript',
      from: '2024-01-01T00:00:00.000Z',
      to: '2024-02-01T10:00:00.000Z',
      limit: 20,
    });
  });

  it.each([
    [{}, 'query'],
    [{ query: 'a', label: 'b' }, 'label'],
    [{ query: '   ' }, 'query'],
    [{ query: 'a', limit: 0 }, 'limit'],
    [{ query: 'a', limit: 21 }, 'limit'],
    [{ query: 'a', limit: 2.5 }, 'limit'],
    [{ query: 'a', depth: -1 }, 'depth'],
    [{ query: 'a', kind: 'everything' }, 'kind'],
    [{ query: 'a', from: 'last tuesday' }, 'from'],
    [{ query: 'a', from: '2024-02-01', to: '2024-01-01' }, 'from'],
    [{ query: 'a', conversationId: 'other' }, 'conversationId'],
    [{ query: 42 }, 'query'],
    ['not json', 'arguments'],
    [[1, 2], 'arguments'],
    [{ query: 'lock\u0000code' }, 'query'],
    [{ query: 'half an emoji \uD83D' }, 'query'],
    // JSON from a model can carry an escaped lone surrogate.
    ['{"query":"a \\udc00 b"}', 'query'],
    [{ query: 'x'.repeat(2_001) }, 'query'],
    [{ label: 'compaction-batch-\uD800' }, 'label'],
    [{ label: 'l\u0000' }, 'label'],
    [{ label: 'l'.repeat(2_001) }, 'label'],
    [{ query: 'a', from: '2024-01-01\u0000' }, 'from'],
    [{ query: 'a', max_tokens: 199 }, 'max_tokens'],
    [{ query: 'a', max_tokens: 12_001 }, 'max_tokens'],
    [{ query: 'a', max_tokens: '3000' }, 'max_tokens'],
  ])('refuse %j with an error naming %s', (input, field) => {
    expect(() => parseMemoryReadArgs(input)).toThrow(new RegExp(`Invalid argument ${field}:`));
  });

  it('the tool definition is an OpenAI function tool whose schema admits no conversation id', () => {
    expect(MEMORY_READ_DEFINITION.type).toBe('function');
    expect(MEMORY_READ_DEFINITION.function.name).toBe('memory_read');
    const parameters = MEMORY_READ_DEFINITION.function.parameters as { additionalProperties: boolean; properties: Record<string, unknown> };
    expect(parameters.additionalProperties).toBe(false);
    expect(Object.keys(parameters.properties).sort()).toEqual(['depth', 'from', 'kind', 'label', 'limit', 'max_tokens', 'page', 'query', 'to']);
  });

  it('the schema states the limits the parser enforces on max_tokens and limit', () => {
    const properties = (MEMORY_READ_DEFINITION.function.parameters as { properties: Record<string, { minimum?: number; maximum?: number; default?: number }> })
      .properties;
    const { minimum, maximum } = properties.max_tokens!;
    expect(parseMemoryReadArgs({ query: 'a', max_tokens: minimum }).maxTokens).toBe(minimum);
    expect(parseMemoryReadArgs({ query: 'a', max_tokens: maximum }).maxTokens).toBe(maximum);
    expect(() => parseMemoryReadArgs({ query: 'a', max_tokens: minimum! - 1 })).toThrow(/max_tokens/);
    expect(() => parseMemoryReadArgs({ query: 'a', max_tokens: maximum! + 1 })).toThrow(/max_tokens/);
    expect(() => parseMemoryReadArgs({ query: 'a', limit: properties.limit!.maximum! + 1 })).toThrow(/limit/);
    expect(parseMemoryReadArgs({ query: 'a' }).limit).toBe(properties.limit!.default);
  });

  it('the definition is generated from the schema that parses: its limits, enum and no conversation id', () => {
    const parameters = MEMORY_READ_DEFINITION.function.parameters as {
      type: string;
      $schema?: string;
      properties: Record<string, { maxLength?: number; enum?: string[]; default?: number }>;
    };
    expect(parameters).toEqual(memoryReadParameters());
    expect(parameters.type).toBe('object');
    expect(parameters.$schema).toBeUndefined();
    expect(parameters.properties.query!.maxLength).toBe(2_000);
    expect(parameters.properties.kind!.enum).toEqual(['summary', 'transcript']);
    expect(parameters.properties.max_tokens!.default).toBe(3_000);
    // The schema's default for max_tokens is a description: an absent max_tokens leaves the tool's budget.
    expect(parseMemoryReadArgs({ query: 'a' }).maxTokens).toBeUndefined();
  });

  it('null means absent, and errors say the rule', () => {
    expect(parseMemoryReadArgs({ query: 'a', label: null, depth: null, max_tokens: 500 })).toEqual({ query: 'a', limit: 5, maxTokens: 500 });
    expect(() => parseMemoryReadArgs({ query: 'a', conversationId: 'x' })).toThrow(
      'Invalid argument conversationId: is not an argument of memory_read (known: query, label, depth, kind, from, to, limit, max_tokens, page)',
    );
    expect(() => parseMemoryReadArgs({ query: 'a', limit: '3' })).toThrow('Invalid argument limit: must be an integer from 1 to 20');
    expect(() => parseMemoryReadArgs({ query: 'a', from: '2023-02-30' })).toThrow(
      /Invalid argument from: must be an ISO 8601 date or time .* on a real calendar day/,
    );
    expect(() => parseMemoryReadArgs({ query: 42 })).toThrow('Invalid argument query: must be a string');
  });
});

describe('MemoryReadArgs', () => {
  it('is the schema output: each argument as parsed, max_tokens as maxTokens, absent ones absent', () => {
    expectTypeOf(parseMemoryReadArgs).returns.toEqualTypeOf<MemoryReadArgs>();
    expectTypeOf<MemoryReadArgs>().toEqualTypeOf<{
      query?: string;
      label?: string;
      depth?: number;
      kind?: 'summary' | 'transcript';
      from?: string;
      to?: string;
      limit: number;
      maxTokens?: number;
      page?: number;
    }>();
  });
});
