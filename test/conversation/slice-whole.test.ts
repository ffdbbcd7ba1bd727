import { describe, expect, it } from 'vitest';
import { sliceWhole, textProblem } from '../../src/conversation/well-formed-text.js';

describe('sliceWhole', () => {
  const text = 'x😀y😀'; // x, pair at 1-2, y, pair at 4-5

  it('cuts as slice does where no pair is split', () => {
    expect(sliceWhole(text, 0, 1)).toBe('x');
    expect(sliceWhole(text, 0, 3)).toBe('x😀');
    expect(sliceWhole(text, 3)).toBe('y😀');
    expect(sliceWhole('plain ascii', 2, 7)).toBe('ain a');
  });

  it('moves an end inside a pair to before it, and a start inside one to after it', () => {
    expect(sliceWhole(text, 0, 2)).toBe('x');
    expect(sliceWhole(text, 0, 5)).toBe('x😀y');
    expect(sliceWhole(text, 2)).toBe('y😀');
    expect(sliceWhole(text, 2, 2)).toBe('');
    expect(sliceWhole('😀', 1, 1)).toBe('');
  });

  it('never leaves a lone surrogate, wherever a run of astral characters is cut', () => {
    const run = `a${'𝄞😀𑨋'.repeat(20)}`;
    for (let start = 0; start <= run.length; start++) {
      for (let end = start; end <= run.length; end += 7) expect(textProblem(sliceWhole(run, start, end))).toBeUndefined();
    }
  });
});
