import { z } from 'zod';
import { describe, expect, it } from 'vitest';
import { issuePath, parseWithSchema } from '../../src/conversation/schema-issues.js';
import { InvalidArgumentError, InvalidConfigError } from '../../src/errors.js';

describe('schema issues', () => {
  it('paths read as the project names fields', () => {
    expect(issuePath(['toolCalls', 0, 'function', 'name'], 'messages[3]')).toBe('messages[3].toolCalls[0].function.name');
    expect(issuePath(['created_at'], 'line 3')).toBe('line 3.created_at');
    expect(issuePath([2, 'id'], 'messages')).toBe('messages[2].id');
    expect(issuePath(['MEMFOLD_MODEL_TIMEOUT_MS'])).toBe('MEMFOLD_MODEL_TIMEOUT_MS');
  });

  it('the first issue becomes one error naming the field; unknown fields come first; types are worded with the value', () => {
    const schema = z.strictObject({ role: z.string(), n: z.number().int('must be an integer') });
    expect(() => parseWithSchema(schema, { role: 5, n: 1 }, { prefix: 'messages[0]' })).toThrow(
      new InvalidArgumentError('messages[0].role', 'must be a string, got 5'),
    );
    expect(() => parseWithSchema(schema, { role: 'x', n: 1.5 })).toThrow('Invalid argument n: must be an integer');
    const unknown = (() => {
      try {
        parseWithSchema(schema, { role: 5, extra: true });
      } catch (error) {
        return error as InvalidArgumentError;
      }
    })();
    expect(unknown?.field).toBe('extra');
    expect(() => parseWithSchema(z.object({ A: z.string() }), {}, { toError: (f, r) => new InvalidConfigError(f, r) })).toThrow(
      new InvalidConfigError('A', 'must be a string, got undefined'),
    );
    expect(parseWithSchema(schema, { role: 'x', n: 2 })).toEqual({ role: 'x', n: 2 });
  });
});
