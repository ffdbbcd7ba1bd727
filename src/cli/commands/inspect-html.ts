/**
 * `memfold inspect <conversation> --html <file>`: the archived batches on a time axis by depth, as one
 * self-contained HTML page for an operator to open in a browser. Reads the store, writes only that file.
 */
import { writeFile } from 'node:fs/promises';
import path from 'node:path';
import type { Memfold } from '../../memfold.js';
import { buildTimelineModel, type TimelineModel } from '../html-timeline/timeline-model.js';
import { renderTimelinePage } from '../html-timeline/timeline-page.js';
import { printJson, printStored, type Output } from '../output.js';

/** The page model of a conversation: every archive entry of it (summaries, transcripts, tool outputs) and its live rows. */
export async function gatherTimeline(memfold: Pick<Memfold, 'archive' | 'history'>, conversationId: string, now = new Date()): Promise<TimelineModel> {
  const list = (kind: 'summary' | 'transcript' | 'tool_output') => memfold.archive.list({ conversationId, kind });
  const [summaries, transcripts, toolOutputs, live] = await Promise.all([
    list('summary'),
    list('transcript'),
    list('tool_output'),
    memfold.history(conversationId),
  ]);
  return buildTimelineModel({ conversationId, generatedAt: now.toISOString(), summaries, transcripts, toolOutputs, live });
}

export async function runInspectHtml(
  memfold: Pick<Memfold, 'archive' | 'history'>,
  conversationId: string,
  file: string,
  options: { json: boolean },
  output: Output,
): Promise<number> {
  const model = await gatherTimeline(memfold, conversationId);
  const written = path.resolve(file);
  await writeFile(written, renderTimelinePage(model), 'utf8');
  const batches = model.batches.length;
  if (options.json) printJson(output, { conversationId, file: written, batches, depths: model.depths });
  else printStored(output, `wrote ${written}: ${batches} ${batches === 1 ? 'batch' : 'batches'} of conversation ${conversationId}`);
  return 0;
}
