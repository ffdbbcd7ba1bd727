import { Tiktoken } from 'js-tiktoken/lite';
import cl100k from 'js-tiktoken/ranks/cl100k_base';
import o200k from 'js-tiktoken/ranks/o200k_base';
import { describe, expect, it } from 'vitest';
import { CALIBRATION_RANGE, INITIAL_CALIBRATION, MESSAGE_OVERHEAD_TOKENS, createTokenCounter } from '../../src/tokens/create-token-counter.js';
import { encodingForModel } from '../../src/tokens/encodings.js';

const text = 'The quick brown fox paid $4,870.25 for src/auth/login.test.ts on 2024-03-15. Ünïcödé ✓ 東京';
const calls = [{ id: 'call_1', type: 'function' as const, function: { name: 'book_reservation', arguments: '{"user_id":"mia_li_3668","amount":250}' } }];

describe('encodingForModel', () => {
  it.each([
    ['gpt-4o', 'o200k_base'],
    ['gpt-4o-mini', 'o200k_base'],
    ['openai/gpt-4.1-nano', 'o200k_base'],
    ['gpt-5', 'o200k_base'],
    ['o1-preview', 'o200k_base'],
    ['o3-mini', 'o200k_base'],
    ['o4-mini', 'o200k_base'],
    ['gpt-4', 'cl100k_base'],
    ['gpt-4-turbo', 'cl100k_base'],
    ['gpt-3.5-turbo', 'cl100k_base'],
    ['llama3.1:8b', undefined],
    ['claude-3-5-sonnet', undefined],
  ])('%s -> %s', (model, encoding) => {
    expect(encodingForModel(model)).toBe(encoding);
  });
});

describe('createTokenCounter', () => {
  it('counts exactly with o200k_base for gpt-4o, matching js-tiktoken directly', () => {
    const counter = createTokenCounter({ model: 'gpt-4o' });
    const direct = new Tiktoken(o200k);
    expect(counter.exact).toBe(true);
    expect(counter.count(text)).toBe(direct.encode(text).length);
    expect(counter.count('')).toBe(0);
  });

  it('counts exactly with cl100k_base for gpt-4, and the two differ on this text', () => {
    const counter = createTokenCounter({ model: 'gpt-4-0613' });
    const cl = new Tiktoken(cl100k).encode(text).length;
    expect(counter.count(text)).toBe(cl);
    expect(cl).not.toBe(new Tiktoken(o200k).encode(text).length);
  });

  it('counts special-token text as ordinary text instead of throwing', () => {
    const counter = createTokenCounter({ model: 'gpt-4o' });
    expect(counter.count('<|endoftext|>')).toBeGreaterThan(1);
  });

  it('counts a message: overhead + content + name + exact tool-call JSON', () => {
    const counter = createTokenCounter({ model: 'gpt-4o' });
    const direct = new Tiktoken(o200k);
    const n = counter.countMessage({ role: 'assistant', content: text, name: 'agent', toolCalls: calls });
    expect(n).toBe(MESSAGE_OVERHEAD_TOKENS + direct.encode(text).length + direct.encode('agent').length + direct.encode(JSON.stringify(calls)).length);
  });

  it('chars4 mode is plain ceil(chars / 4) and ignores usage', () => {
    const counter = createTokenCounter({ model: 'gpt-4o', mode: 'chars4' });
    expect(counter.exact).toBe(false);
    expect(counter.count('abcde')).toBe(2);
    counter.observe('abcdefgh', 100);
    expect(counter.count('abcdefgh')).toBe(2);
    expect(counter.countMessage({ role: 'user', content: 'abcd' })).toBe(MESSAGE_OVERHEAD_TOKENS + 1);
  });

  it('estimates chars/4 x 1.5 before any usage for an unknown model', () => {
    const counter = createTokenCounter({ model: 'llama3.1:8b' });
    expect(counter.exact).toBe(false);
    expect(INITIAL_CALIBRATION).toBe(1.5);
    expect(counter.count('a'.repeat(400))).toBe(150);
    expect(createTokenCounter().count('a'.repeat(400))).toBe(150);
  });

  it('calibrates on observed usage, clamped to [1, 5]', () => {
    const counter = createTokenCounter({ model: 'llama3.1:8b' });
    const sample = 'x'.repeat(400); // chars/4 = 100
    counter.observe(sample, 250);
    expect(counter.count(sample)).toBe(250);
    counter.observe(sample, 50); // 0.5 -> clamped to 1
    expect(counter.count(sample)).toBe(100 * CALIBRATION_RANGE.min);
    counter.observe(sample, 10_000); // 100 -> clamped to 5
    expect(counter.count(sample)).toBe(100 * CALIBRATION_RANGE.max);
    counter.observe('', 10); // ignored
    counter.observe(sample, 0); // ignored
    expect(counter.count(sample)).toBe(500);
  });

  it('counts tool-call JSON exactly even when estimating text', () => {
    const counter = createTokenCounter({ model: 'llama3.1:8b' });
    const json = JSON.stringify(calls);
    expect(counter.countMessage({ role: 'assistant', content: '', toolCalls: calls })).toBe(MESSAGE_OVERHEAD_TOKENS + new Tiktoken(o200k).encode(json).length);
  });

  it('exact counters ignore observe', () => {
    const counter = createTokenCounter({ model: 'gpt-4o' });
    const before = counter.count(text);
    counter.observe(text, 10_000);
    expect(counter.count(text)).toBe(before);
  });

  it('rejects an unknown mode', () => {
    expect(() => createTokenCounter({ mode: 'bogus' as 'auto' })).toThrow(/Invalid argument mode/);
  });
});
