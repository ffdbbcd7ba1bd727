/**
 * With the model unknown the counter estimates everything, tool-call JSON included, and loads no tokenizer: the
 * o200k_base ranks take seconds to load. Its own file, so that no other test has loaded an encoder in this process.
 */
import { describe, expect, it } from 'vitest';
import { createTokenCounter } from '../../src/tokens/create-token-counter.js';
import { loadedEncodings } from '../../src/tokens/encodings.js';

describe('a counter for an unknown model', () => {
  it('counts messages with tool calls without loading any encoding', () => {
    const counter = createTokenCounter({ model: 'llama3.1:8b' });
    const toolCalls = [{ id: 'call_1', type: 'function' as const, function: { name: 'get_order', arguments: '{"order_id":"ORD-1"}' } }];
    expect(counter.countMessage({ role: 'assistant', content: 'Looking it up.', toolCalls })).toBeGreaterThan(10);
    expect(createTokenCounter().countMessage({ role: 'assistant', content: '', toolCalls })).toBeGreaterThan(4);
    // That a known model's counter shows up here is checked in token-counter.test.ts (loading one takes seconds).
    expect(loadedEncodings()).toEqual([]);
  });
});
