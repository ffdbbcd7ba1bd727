/**
 * Answer-token retention of extractive summaries of LoCoMo sessions (shared by the quality benchmark and the
 * gated test): each session summarized at 1/RATIO of its tokens (chars/4), alone or chained with the previous
 * session's summary as `previousSummary`; each question (category 5, adversarial, left out) scored against the
 * summaries of the sessions its evidence lies in, and against LoCoMo's own `session_N_summary` of them.
 */
import { readFileSync } from 'node:fs';
import { answerTokenRetention } from '../../src/eval/answer-tokens.js';
import { summarizeExtractive } from '../../src/summarizer/extractive/extractive-summary.js';
import type { SummarizeRequest } from '../../src/summarizer/summarizer.js';
import { LOCOMO_FILE } from '../support/shared-data.js';
import { linesOf, locomoSessions } from './extractive-data.js';

const mean = (values: readonly number[]): number => (values.length === 0 ? Number.NaN : values.reduce((a, b) => a + b, 0) / values.length);

/** Target compression: the summary gets session tokens / RATIO. */
export const RATIO = 3.5;

export interface Figures {
  sessions: number;
  questions: number;
  /** Mean retention over the questions. */
  retention: number;
  /** Mean retention per question category (1 multi-hop, 2 temporal, 3 open-domain, 4 single-hop). */
  byCategory: Record<string, number>;
  /** Total input chars / total output chars. */
  compression: number;
  reference: number;
  referenceCompression: number;
  /** Evidence ids that name no turn of the conversation (skipped), and questions left without evidence. */
  skippedEvidence: number;
  noEvidence: number;
}

/** The session a well-formed evidence id ("D3:12") points to. */
function evidenceSession(id: string): number | undefined {
  const m = /^D(\d+):(\d+)$/.exec(id.trim());
  return m ? Number(m[1]) : undefined;
}

interface Locomo {
  session_summary: Record<string, string>;
}

/** Summaries of every session of conversation `c`, by session number; `chained` passes the previous one along. */
export function summarizeSessions(c: number, chained: boolean): { summaries: Map<number, string>; inputChars: number } {
  const { sessions } = locomoSessions(c);
  const summaries = new Map<number, string>();
  let inputChars = 0;
  let previous: string | undefined;
  for (const [s, session] of sessions) {
    const budget = Math.floor(Math.ceil(session.transcript.length / 4) / RATIO);
    const request: SummarizeRequest = {
      purpose: 'fold',
      lines: linesOf(session.transcript),
      maxOutputTokens: budget,
      ...(chained && previous ? { previousSummary: previous } : {}),
    };
    previous = summarizeExtractive(request);
    summaries.set(s, previous);
    inputChars += session.transcript.length;
  }
  return { summaries, inputChars };
}

/**
 * Each question (category != 5) is scored against the summaries of the sessions its evidence lies in, joined
 * in order: a multi-hop question needs all of them.
 */
export function figures(conversations: readonly number[], chained: boolean): Figures {
  const data = JSON.parse(readFileSync(LOCOMO_FILE, 'utf8')) as Locomo[];
  const retained: number[] = [];
  const reference: number[] = [];
  const byCategory = new Map<number, number[]>();
  let sessions = 0;
  let inputChars = 0;
  let outputChars = 0;
  let referenceChars = 0;
  let skippedEvidence = 0;
  let noEvidence = 0;
  for (const c of conversations) {
    const { summaries, inputChars: chars } = summarizeSessions(c, chained);
    const referenceOf = (s: number) => data[c]!.session_summary[`session_${s}_summary`] ?? '';
    sessions += summaries.size;
    inputChars += chars;
    for (const [s, text] of summaries) {
      outputChars += text.length;
      referenceChars += referenceOf(s).length;
    }
    for (const q of locomoSessions(c).qa) {
      if (q.category === 5 || q.answer === undefined) continue;
      const targets = new Set<number>();
      for (const id of q.evidence ?? []) {
        const s = evidenceSession(id);
        if (s === undefined || !summaries.has(s)) skippedEvidence++;
        else targets.add(s);
      }
      if (targets.size === 0) {
        noEvidence++;
        continue;
      }
      const ordered = [...targets].sort((a, b) => a - b);
      const r = answerTokenRetention(String(q.answer), ordered.map((s) => summaries.get(s)!).join('\n'));
      if (r === null) continue;
      retained.push(r);
      byCategory.set(q.category, [...(byCategory.get(q.category) ?? []), r]);
      reference.push(answerTokenRetention(String(q.answer), ordered.map(referenceOf).join('\n')) ?? 0);
    }
  }
  return {
    sessions,
    questions: retained.length,
    retention: mean(retained),
    byCategory: Object.fromEntries([...byCategory].sort(([a], [b]) => a - b).map(([k, v]) => [String(k), mean(v)])),
    compression: inputChars / outputChars,
    reference: mean(reference),
    referenceCompression: inputChars / referenceChars,
    skippedEvidence,
    noEvidence,
  };
}
