/** The SVG chart and the markdown report: well-formed, escaped, one line per method. */
import { describe, expect, it } from 'vitest';
import { windowChart } from '../../src/eval/chart.js';
import { parseWindows } from '../../src/eval/evaluate.js';

describe('availability chart', () => {
  const svg = windowChart(
    [
      {
        name: 'memfold',
        points: [
          { window: 4000, value: 0.9 },
          { window: 8000, value: 0.95 },
        ],
      },
      {
        name: 'a <b> & "c"',
        dashed: true,
        points: [
          { window: 4000, value: 0.2 },
          { window: 8000, value: 1.4 },
        ],
      },
    ],
    { title: 'T & t', yLabel: 'availability' },
  );

  it('draws one polyline per series, windows as ticks, and escapes text', () => {
    expect(svg.startsWith('<svg xmlns="http://www.w3.org/2000/svg"')).toBe(true);
    expect(svg.match(/<polyline /g)).toHaveLength(2);
    expect(svg).toContain('>4k</text>');
    expect(svg).toContain('>8k</text>');
    expect(svg).toContain('a &lt;b&gt; &amp; &quot;c&quot;');
    expect(svg).toContain('T &amp; t');
    expect(svg).not.toMatch(/NaN|undefined/);
    // Values are clamped to the plot: 1.4 sits on the 1.0 line.
    expect(svg).toContain('stroke-dasharray');
  });
});

describe('--windows', () => {
  it('reads a sorted, de-duplicated list and refuses bad sizes', () => {
    expect(parseWindows('16000, 4000,8000,4000')).toEqual([4000, 8000, 16000]);
    expect(() => parseWindows('4000,abc')).toThrow(/--windows/);
    expect(() => parseWindows('100')).toThrow(/>= 256/);
  });
});
