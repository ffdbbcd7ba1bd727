import { describe, expect, it } from 'vitest';
import { describeValue, keyProblem, MAX_KEY_BYTES, requireKey, requireText, requireTextArray } from '../../src/conversation/text.js';
import { InvalidArgumentError } from '../../src/errors.js';

function refusal(run: () => unknown): InvalidArgumentError {
  try {
    run();
  } catch (error) {
    if (error instanceof InvalidArgumentError) return error;
    throw error;
  }
  throw new Error('not refused');
}

describe('text rules', () => {
  it('requireText: a string PostgreSQL stores unchanged, empty only when allowed', () => {
    expect(requireText('héllo 👩‍💻', 'f')).toBe('héllo 👩‍💻');
    expect(requireText('', 'f', { allowEmpty: true })).toBe('');
    expect(refusal(() => requireText('', 'messages[0].id')).message).toBe('Invalid argument messages[0].id: must not be empty');
    expect(refusal(() => requireText(42, 'f')).message).toBe('Invalid argument f: must be a string, got 42');
    expect(refusal(() => requireText('a\u0000b', 'f')).message).toContain('must not contain U+0000 (found at index 1');
    expect(refusal(() => requireText('x\uD800', 'f')).message).toContain('lone surrogate U+D800 at index 1');
  });

  it('requireKey: at most 1 KiB of UTF-8 unless told otherwise', () => {
    expect(requireKey('a'.repeat(MAX_KEY_BYTES), 'id')).toHaveLength(MAX_KEY_BYTES);
    expect(refusal(() => requireKey('é'.repeat(513), 'id')).message).toBe('Invalid argument id: must be at most 1024 bytes of UTF-8, got 1026');
    expect(keyProblem('abc', 2)).toBe('must be at most 2 bytes of UTF-8, got 3');
    expect(keyProblem('ab', 2)).toBeUndefined();
  });

  it('requireTextArray names the element', () => {
    expect(requireTextArray(['a', 'b'], 'ids')).toEqual(['a', 'b']);
    expect(refusal(() => requireTextArray('a', 'ids')).field).toBe('ids');
    expect(refusal(() => requireTextArray(['a', ''], 'ids')).field).toBe('ids[1]');
  });

  it('describeValue shows strings quoted and cut, numbers as written, else the kind', () => {
    expect(describeValue('x'.repeat(50))).toBe(`"${'x'.repeat(40)}…"`);
    expect(describeValue(3)).toBe('3');
    expect(describeValue(null)).toBe('null');
    expect(describeValue([])).toBe('an array');
    expect(describeValue({})).toBe('object');
  });
});
