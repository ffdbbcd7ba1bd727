/**
 * The `inspect --html` page without a browser: the time axis shortens quiet gaps, the model puts batches in one
 * lane per depth with their children and transcripts, and the page carries stored text only as escaped data.
 */
import { createHash } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import type { ArchiveEntry, ConversationMessage } from '../../src/conversation/types.js';
import { buildTimeAxis } from '../../src/cli/html-timeline/time-axis.js';
import { buildTimelineModel, MAX_MESSAGE_CHARS, type TimelineInput } from '../../src/cli/html-timeline/timeline-model.js';
import { escapeHtml, renderTimelinePage } from '../../src/cli/html-timeline/timeline-page.js';
import { TIMELINE_SCRIPT } from '../../src/cli/html-timeline/timeline-script.js';

const HOSTILE = 'look: </script><script>alert(1)</script> <!-- & \u2028 <img src=x onerror=alert(2)>';
const at = (day: number, minute: number) => new Date(Date.UTC(2024, 0, day, 9, minute)).toISOString();

function message(seq: number, day: number, content: string, extra: Partial<ConversationMessage> = {}): ConversationMessage {
  return { id: `m${seq}`, conversationId: 'c', seq, role: seq % 2 ? 'user' : 'assistant', content, createdAt: at(day, seq), ...extra };
}

function entry(kind: ArchiveEntry['kind'], label: string, depth: number, messages: ConversationMessage[], extra: Partial<ArchiveEntry> = {}): ArchiveEntry {
  return {
    kind,
    label,
    conversationId: 'c',
    depth,
    start: messages[0]?.createdAt ?? extra.start!,
    end: messages.at(-1)?.createdAt ?? extra.end!,
    count: messages.length,
    content: `[depth:${depth}] summary of ${label}`,
    sourceIds: messages.map((m) => m.id),
    operationId: 'op',
    ...(kind === 'summary' ? {} : { messages }),
    ...extra,
  };
}

/** Two depth-0 batches a day apart under one depth-1 batch, a third batch on its own, a live tail. */
function input(): TimelineInput {
  const day1 = [message(1, 1, HOSTILE), message(2, 1, 'reply one')];
  const day2 = [message(3, 2, 'question two', { name: 'ann' }), message(4, 2, 'x'.repeat(MAX_MESSAGE_CHARS + 5), { role: 'tool', toolCallId: 't' })];
  const day3 = [message(5, 3, 'question three')];
  return {
    conversationId: 'c<b>"',
    generatedAt: at(9, 0),
    summaries: [
      entry('summary', 'b2', 0, day2, { parentLabel: 'top' }),
      entry('summary', 'b1', 0, day1, { parentLabel: 'top', content: `[depth:0] ${HOSTILE}` }),
      entry('summary', 'b3', 0, day3),
      entry('summary', 'top', 1, [], { start: at(1, 1), end: at(2, 4), count: 2, sourceIds: ['b1', 'b2'] }),
    ],
    transcripts: [entry('transcript', 't1', 0, day1, { parentLabel: 'b1' }), entry('transcript', 't2', 0, day2, { parentLabel: 'b2' })],
    toolOutputs: [entry('tool_output', 'o-old', 0, [day2[1]!], { parentLabel: 't2' }), entry('tool_output', 'o-live', 0, [message(8, 4, 'cleared output')])],
    live: [
      message(0, 4, 'clip', { role: 'system', kind: 'clip_archive' }),
      message(6, 4, 'kept opening'),
      message(8, 4, '[cleared: see o-live]'),
      message(9, 4, 'newest'),
    ],
  };
}

describe('buildTimeAxis', () => {
  it('keeps busy stretches in proportion and draws every quiet gap the same width', () => {
    const axis = buildTimeAxis([at(1, 0), at(1, 20), at(3, 0), at(3, 20), at(10, 0), at(10, 20)], { quietMs: 30 * 60_000, gapWidthMs: 20 * 60_000 });
    // Three 20-minute stretches and two gaps drawn 20 minutes wide: fifths, whatever the days between.
    expect([at(1, 0), at(1, 20), at(3, 0), at(3, 20), at(10, 0), at(10, 20)].map((t) => Number(axis.position(t).toFixed(3)))).toEqual([
      0, 0.2, 0.4, 0.6, 0.8, 1,
    ]);
    expect(axis.position(at(1, 10))).toBeCloseTo(0.1);
    expect(axis.ticks.map((t) => t.time)).toEqual([at(1, 0), at(3, 0), at(10, 0)]);
    expect(axis.breaks.map((b) => Number(b.toFixed(3)))).toEqual([0.3, 0.7]);
    expect(buildTimeAxis([]).position(at(1, 0))).toBe(0);
  });
});

describe('buildTimelineModel', () => {
  it('puts batches in one lane per depth, deepest first, with children, transcripts and the live runs', () => {
    const model = buildTimelineModel(input());
    expect(model.depths).toEqual([1, 0]);
    expect(model.batches.map((b) => b.label)).toEqual(['b1', 'top', 'b2', 'b3']);
    const byLabel = new Map(model.batches.map((b) => [b.label, b]));
    expect(byLabel.get('top')).toMatchObject({ children: ['b1', 'b2'], transcript: [] });
    expect(byLabel.get('b1')).toMatchObject({ parent: 'top', children: [] });
    expect(byLabel.get('b1')!.transcript.map((m) => m.text)).toEqual([HOSTILE, 'reply one']);
    expect(byLabel.get('b2')!.transcript[0]).toMatchObject({ name: 'ann', text: 'question two' });
    expect(byLabel.get('b2')!.transcript[1]).toMatchObject({ role: 'tool', cut: 5 });
    expect(byLabel.get('b2')!.transcript[1]!.text).toHaveLength(MAX_MESSAGE_CHARS);
    expect(byLabel.get('b3')).not.toHaveProperty('parent');
    for (const b of model.batches) expect(b.x0).toBeLessThanOrEqual(b.x1);
    expect(byLabel.get('b1')!.x1).toBeLessThan(byLabel.get('b2')!.x0);
    // The clip-archive is not conversation; seqs 6 and 8..9 are two runs; only the output no segment holds is listed.
    expect(model.live!.messages).toBe(3);
    expect(model.live!.runs.map((r) => [r.firstSeq, r.lastSeq, r.messages])).toEqual([
      [6, 6, 1],
      [8, 9, 2],
    ]);
    expect(model.live!.clearedOutputs.map((m) => m.text)).toEqual(['cleared output']);
  });

  it('has no live lane and no lanes at all for an empty conversation', () => {
    const model = buildTimelineModel({ conversationId: 'e', generatedAt: at(1, 0), summaries: [], transcripts: [], toolOutputs: [], live: [] });
    expect(model).toMatchObject({ depths: [], batches: [], ticks: [] });
    expect(model).not.toHaveProperty('live');
  });
});

describe('renderTimelinePage', () => {
  const model = buildTimelineModel(input());
  const html = renderTimelinePage(model);

  it('carries stored text as data only: no tag of it survives, and the JSON block reads back the model', () => {
    expect(html.match(/<script/g)).toHaveLength(2);
    expect(html.match(/<\/script>/g)).toHaveLength(2);
    expect(html).not.toContain('<img');
    expect(html).not.toContain('alert(1)</script>');
    expect(html).not.toContain('<!--');
    expect(html).toContain('<title>memfold timeline · c&lt;b&gt;&quot;</title>');
    const json = /<script type="application\/json" id="timeline-data">(.*?)<\/script>/s.exec(html)![1]!;
    expect(JSON.parse(json)).toEqual(model);
    expect(escapeHtml(`<a href="x" title='y'>&</a>`)).toBe('&lt;a href=&quot;x&quot; title=&#39;y&#39;&gt;&amp;&lt;/a&gt;');
  });

  it('loads nothing and runs only its own script (CSP with its hash)', () => {
    const hash = createHash('sha256').update(TIMELINE_SCRIPT).digest('base64');
    expect(html).toContain(`script-src 'sha256-${hash}'`);
    expect(html).toContain("default-src 'none'");
    expect(html).not.toMatch(/\b(src|href)=["']?(https?:)?\/\//);
    // The script never turns data into markup.
    expect(TIMELINE_SCRIPT).not.toMatch(/innerHTML|outerHTML|insertAdjacentHTML|document\.write|eval\(/);
  });

  it('states the batch count and the batches of each depth', () => {
    expect(html).toContain('4 batches · depth 1: 1 · depth 0: 3 · 3 live messages');
  });
});
