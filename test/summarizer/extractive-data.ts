/** Render LoCoMo sessions and τ-bench runs as memfold transcripts (test helpers for the extractive summarizer). */
import { readFileSync } from 'node:fs';
import { parseTranscript, renderTranscript } from '../../src/compaction/format/transcript-format.js';
import type { SummaryLine } from '../../src/summarizer/summarizer.js';
import { LOCOMO_FILE, TAU_BENCH_EXCERPT } from '../support/shared-data.js';

const MONTHS = ['january', 'february', 'march', 'april', 'may', 'june', 'july', 'august', 'september', 'october', 'november', 'december'];

/** "1:56 pm on 8 May, 2023" -> ISO. */
/** The summarizer lines of a transcript written with renderTranscript (test data is kept in that readable form). */
export function linesOf(transcript: string): SummaryLine[] {
  return parseTranscript(transcript).map((line) => ({
    time: line.createdAt,
    role: line.role,
    text: line.content,
    ...(line.name ? { name: line.name } : {}),
    ...(line.toolCallId ? { toolCallId: line.toolCallId } : {}),
    ...(line.toolCalls.length > 0 ? { toolCalls: line.toolCalls } : {}),
  }));
}

export function locomoDate(text: string): string {
  const m = /(\d+):(\d+)\s*(am|pm) on (\d+) (\w+),? (\d{4})/i.exec(text);
  if (!m) throw new Error(`unparsable LoCoMo date ${text}`);
  const hour = (Number(m[1]) % 12) + (m[3]!.toLowerCase() === 'pm' ? 12 : 0);
  return new Date(Date.UTC(Number(m[6]), MONTHS.indexOf(m[5]!.toLowerCase()), Number(m[4]), hour, Number(m[2]))).toISOString();
}

export interface LocomoSession {
  transcript: string;
  createdAt: string;
  turns: Array<{ speaker: string; text: string; dia_id: string }>;
}

export function locomoSessions(conversationIndex: number): {
  sessions: Map<number, LocomoSession>;
  qa: Array<{ answer?: unknown; evidence?: string[]; category: number }>;
} {
  const data = JSON.parse(readFileSync(LOCOMO_FILE, 'utf8'));
  const conv = data[conversationIndex];
  const c = conv.conversation;
  const sessions = new Map<number, LocomoSession>();
  for (let s = 1; c[`session_${s}`]; s++) {
    const createdAt = locomoDate(c[`session_${s}_date_time`]);
    const turns = c[`session_${s}`];
    const transcript = renderTranscript(
      turns.map((t: { speaker: string; text: string }) => ({
        role: t.speaker === c.speaker_a ? 'user' : 'assistant',
        name: t.speaker,
        content: t.text,
        createdAt,
      })),
    );
    sessions.set(s, { transcript, createdAt, turns });
  }
  return { sessions, qa: conv.qa };
}

/** A run of the τ-bench excerpt in test/fixtures (index 0 is the file's first run). */
export function tauRun(index: number): string {
  const runs = JSON.parse(readFileSync(TAU_BENCH_EXCERPT, 'utf8'));
  const traj = runs[index].traj.filter((m: { role: string }) => m.role !== 'system');
  return renderTranscript(
    traj.map((m: { role: 'user' | 'assistant' | 'tool'; content: string | null; name?: string; tool_call_id?: string; tool_calls?: never }, i: number) => ({
      role: m.role,
      content: m.content ?? '',
      ...(m.name ? { name: m.name } : {}),
      ...(m.tool_call_id ? { toolCallId: m.tool_call_id } : {}),
      ...(m.tool_calls ? { toolCalls: m.tool_calls } : {}),
      createdAt: new Date(Date.UTC(2024, 4, 15, 15, i)).toISOString(),
    })),
  );
}
