import { Tiktoken } from 'js-tiktoken/lite';
import cl100k from 'js-tiktoken/ranks/cl100k_base';
import o200k from 'js-tiktoken/ranks/o200k_base';
import { describe, expect, it } from 'vitest';
import { MESSAGE_OVERHEAD_TOKENS, createTokenCounter } from '../../src/tokens/create-token-counter.js';
import { estimateTokens } from '../../src/tokens/estimate-tokens.js';
import { encodingForModel, getEncoder, loadedEncodings } from '../../src/tokens/encodings.js';

const text = 'The quick brown fox paid $4,870.25 for src/auth/login.test.ts on 2024-03-15. Ünïcödé ✓ 東京';
/** js-tiktoken's own o200k_base encoder, apart from memfold's: built once, since building one takes seconds. */
let directO200k: Tiktoken | undefined;
const direct200k = () => (directO200k ??= new Tiktoken(o200k));

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
    const direct = direct200k();
    expect(counter.exact).toBe(true);
    expect(counter.count(text)).toBe(direct.encode(text).length);
    expect(counter.count('')).toBe(0);
    // What no-tokenizer-when-estimating.test.ts relies on: a loaded encoding shows in loadedEncodings().
    expect(loadedEncodings()).toContain('o200k_base');
  });

  it('counts exactly with cl100k_base for gpt-4, and the two differ on this text', () => {
    const counter = createTokenCounter({ model: 'gpt-4-0613' });
    const cl = new Tiktoken(cl100k).encode(text).length;
    expect(counter.count(text)).toBe(cl);
    expect(cl).not.toBe(direct200k().encode(text).length);
  });

  it('counts special-token text as ordinary text instead of throwing', () => {
    const counter = createTokenCounter({ model: 'gpt-4o' });
    expect(counter.count('<|endoftext|>')).toBeGreaterThan(1);
  });

  it('counts a message: overhead + content + name + exact tool-call JSON', () => {
    const counter = createTokenCounter({ model: 'gpt-4o' });
    const direct = direct200k();
    const n = counter.countMessage({ role: 'assistant', content: text, name: 'agent', toolCalls: calls });
    expect(n).toBe(MESSAGE_OVERHEAD_TOKENS + direct.encode(text).length + direct.encode('agent').length + direct.encode(JSON.stringify(calls)).length);
  });

  it('chars4 mode is plain ceil(chars / 4)', () => {
    const counter = createTokenCounter({ model: 'gpt-4o', mode: 'chars4' });
    expect(counter.exact).toBe(false);
    expect(counter.count('abcde')).toBe(2);
    expect(counter.countMessage({ role: 'user', content: 'abcd' })).toBe(MESSAGE_OVERHEAD_TOKENS + 1);
  });

  it('estimates an unknown model: a token per 5 ASCII letters or spaces, per 2 other characters', () => {
    for (const counter of [createTokenCounter({ model: 'llama3.1:8b' }), createTokenCounter()]) {
      expect(counter.exact).toBe(false);
      expect(counter.count('a'.repeat(400))).toBe(80);
      expect(counter.count('Ab '.repeat(100))).toBe(60);
      expect(counter.count('{"x":1}'.repeat(20))).toBe(60 + 4);
      expect(counter.count('東京'.repeat(50))).toBe(50);
      expect(counter.count('a')).toBe(1);
      expect(counter.count('')).toBe(0);
    }
  });

  it('estimates within 15% of o200k_base on prose, JSON and code, where chars/4 is off by up to 30%', () => {
    const exact = getEncoder('o200k_base');
    const samples = {
      prose:
        'I went to a support group yesterday and it was so powerful. We talked about how we got through the winter, and Melanie said she had started painting again after her trip to the lake.',
      json: '{"reservation_id":"ZFA04Y","user_id":"mia_li_3668","origin":"SFO","destination":"JFK","flights":[{"flight_number":"HAT069","date":"2024-05-15","price":1450}],"passengers":2,"total_baggages":3}',
      code: 'def serialize(self, value, attr, obj, **kwargs):\n    if value is None:\n        return None\n    base_unit = dt.timedelta(**{self.precision: 1})\n    return int(round(value.total_seconds() / base_unit.total_seconds()))\n',
    };
    for (const [kind, sample] of Object.entries(samples)) {
      const real = exact.encode(sample).length;
      expect(Math.abs(estimateTokens(sample) / real - 1), kind).toBeLessThan(0.15);
    }
    const json = samples.json;
    expect(Math.ceil(json.length / 4) / exact.encode(json).length - 1).toBeLessThan(-0.2);
  });

  it('estimates tool-call JSON too when the model is unknown', () => {
    const counter = createTokenCounter({ model: 'llama3.1:8b' });
    const json = JSON.stringify(calls);
    expect(counter.countMessage({ role: 'assistant', content: '', toolCalls: calls })).toBe(MESSAGE_OVERHEAD_TOKENS + estimateTokens(json));
  });

  it('remembers counts it took, and counts right again after forgetting them (more text than it keeps)', () => {
    const counter = createTokenCounter({ model: 'gpt-4o' });
    const direct = direct200k();
    const texts = ['{"order_id":"ORD-1","fields":["status"]}', 'Deploy src/server/main.ts on Friday', 'ünïcödé — 東京'];
    for (let round = 0; round < 2; round++) for (const text of texts) expect(counter.count(text)).toBe(direct.encode(text, [], []).length);
    // Over four million characters of other texts: what it remembered is dropped, not mixed up.
    const filler = 'word '.repeat(50_000);
    for (let i = 0; i < 20; i++) counter.count(`${i} ${filler}`);
    for (const text of texts) expect(counter.count(text)).toBe(direct.encode(text, [], []).length);
  });

  it('rejects an unknown mode', () => {
    expect(() => createTokenCounter({ mode: 'bogus' as 'auto' })).toThrow(/Invalid argument mode/);
  });
});
