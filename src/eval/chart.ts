/**
 * A line chart of a share (0..1) against the context window, one line per method, as a standalone
 * SVG string. Hand-written: the chart is simple and the package takes no plotting dependency.
 */

export interface ChartSeries {
  name: string;
  points: ReadonlyArray<{ window: number; value: number }>;
  /** Drawn dashed (a variant of another series). */
  dashed?: boolean;
}

export interface ChartOptions {
  title: string;
  yLabel: string;
}

const COLORS = ['#1f77b4', '#6baed6', '#d62728', '#2ca02c', '#7f7f7f', '#9467bd', '#ff7f0e'];
const WIDTH = 720;
const HEIGHT = 420;
const MARGIN = { top: 48, right: 190, bottom: 56, left: 64 };

function escapeXml(text: string): string {
  return text.replace(/[<>&"']/g, (c) => ({ '<': '&lt;', '>': '&gt;', '&': '&amp;', '"': '&quot;', "'": '&apos;' })[c]!);
}

const label = (window: number) => (window % 1000 === 0 ? `${window / 1000}k` : String(window));

export function windowChart(series: readonly ChartSeries[], options: ChartOptions): string {
  const windows = [...new Set(series.flatMap((s) => s.points.map((p) => p.window)))].sort((a, b) => a - b);
  const plotW = WIDTH - MARGIN.left - MARGIN.right;
  const plotH = HEIGHT - MARGIN.top - MARGIN.bottom;
  // Windows double from one size to the next, so they sit evenly spaced (a log scale).
  const x = (window: number) => MARGIN.left + (windows.length <= 1 ? plotW / 2 : (windows.indexOf(window) / (windows.length - 1)) * plotW);
  const y = (value: number) => MARGIN.top + (1 - Math.min(1, Math.max(0, value))) * plotH;
  const f = (n: number) => n.toFixed(1);

  const grid = [0, 0.2, 0.4, 0.6, 0.8, 1].map(
    (v) =>
      `<line x1="${MARGIN.left}" y1="${f(y(v))}" x2="${MARGIN.left + plotW}" y2="${f(y(v))}" stroke="#ddd"/><text x="${MARGIN.left - 8}" y="${f(y(v) + 4)}" text-anchor="end">${v.toFixed(1)}</text>`,
  );
  const ticks = windows.map((w) => `<text x="${f(x(w))}" y="${MARGIN.top + plotH + 20}" text-anchor="middle">${escapeXml(label(w))}</text>`);
  const lines = series.map((s, i) => {
    const color = COLORS[i % COLORS.length]!;
    const points = [...s.points].sort((a, b) => a.window - b.window);
    const path = points.map((p) => `${f(x(p.window))},${f(y(p.value))}`).join(' ');
    const dots = points.map(
      (p) =>
        `<circle cx="${f(x(p.window))}" cy="${f(y(p.value))}" r="3.5" fill="${color}"><title>${escapeXml(`${s.name} at ${label(p.window)}: ${p.value.toFixed(3)}`)}</title></circle>`,
    );
    const legendY = MARGIN.top + 8 + i * 22;
    return [
      `<polyline points="${path}" fill="none" stroke="${color}" stroke-width="2"${s.dashed ? ' stroke-dasharray="6 4"' : ''}/>`,
      ...dots,
      `<line x1="${WIDTH - MARGIN.right + 16}" y1="${legendY}" x2="${WIDTH - MARGIN.right + 40}" y2="${legendY}" stroke="${color}" stroke-width="2"${s.dashed ? ' stroke-dasharray="6 4"' : ''}/>`,
      `<text x="${WIDTH - MARGIN.right + 46}" y="${legendY + 4}">${escapeXml(s.name)}</text>`,
    ].join('');
  });
  return [
    `<svg xmlns="http://www.w3.org/2000/svg" width="${WIDTH}" height="${HEIGHT}" viewBox="0 0 ${WIDTH} ${HEIGHT}" font-family="sans-serif" font-size="12">`,
    `<rect width="${WIDTH}" height="${HEIGHT}" fill="#fff"/>`,
    `<text x="${MARGIN.left}" y="24" font-size="15" font-weight="bold">${escapeXml(options.title)}</text>`,
    ...grid,
    ...ticks,
    `<line x1="${MARGIN.left}" y1="${MARGIN.top + plotH}" x2="${MARGIN.left + plotW}" y2="${MARGIN.top + plotH}" stroke="#333"/>`,
    `<text x="${MARGIN.left + plotW / 2}" y="${HEIGHT - 12}" text-anchor="middle">context window (tokens)</text>`,
    `<text transform="translate(18 ${MARGIN.top + plotH / 2}) rotate(-90)" text-anchor="middle">${escapeXml(options.yLabel)}</text>`,
    ...lines,
    '</svg>',
    '',
  ].join('\n');
}
