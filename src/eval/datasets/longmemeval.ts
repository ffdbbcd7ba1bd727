/**
 * LongMemEval (Wu et al., ICLR 2025) as an evaluation dataset, from its official JSON (`longmemeval_s_cleaned.json`,
 * `longmemeval_m_cleaned.json`, `longmemeval_oracle.json`): each item is one user's chat history and one question.
 * The history is replayed as one conversation, session after session in the file's order, every turn dated by its
 * session (`haystack_dates`, "2023/05/21 (Sun) 19:50", no zone: read as UTC) and carrying its session's place as
 * `sessionId` (`session_3`): the dataset's session ids are left out, since the originals name the evidence sessions.
 * The question is asked at `question_date`. `has_answer` marks the evidence turns and `answer_session_ids` the
 * evidence sessions: both stay beside the messages, for scoring only. Abstention questions (ids ending `_abs`) have
 * no answer in the history: they are scored like LoCoMo's adversarial ones, outside the headline.
 */
import { z } from 'zod';
import type { NewMessage } from '../../conversation/types.js';
import { isoTimeOrProblem } from '../../conversation/iso-time.js';
import { parseWithSchema } from '../../conversation/schema-issues.js';
import { InvalidArgumentError } from '../../errors.js';
import { checkEvidence, noneSkipped, type EvalConversation, type QaDataset, type SkippedQuestions } from '../eval-types.js';
import { streamJsonArray } from './json-array-stream.js';

/** "2023/05/21 (Sun) 19:50" (weekday optional) as an ISO time, read as UTC; undefined when it is not that shape. */
export function parseLongMemEvalDate(text: string): string | undefined {
  const match = /^\s*(\d{4})\/(\d{1,2})\/(\d{1,2})\s*(?:\([A-Za-z]+\))?\s*(\d{1,2}):(\d{2})\s*$/.exec(text);
  if (!match) return undefined;
  const [year, month, day, hour, minute] = match.slice(1).map((part) => part!.padStart(2, '0'));
  const read = isoTimeOrProblem(`${year}-${month}-${day}T${hour}:${minute}:00Z`);
  return 'time' in read ? read.time : undefined;
}

const text = () => z.union([z.string(), z.number()], { error: 'must be a string' }).transform(String);
const date = () =>
  z.string({ error: 'must be a date like "2023/05/21 (Sun) 19:50"' }).transform((value, ctx) => {
    const iso = parseLongMemEvalDate(value);
    if (iso === undefined)
      ctx.issues.push({ code: 'custom', message: `must be a date like "2023/05/21 (Sun) 19:50", got ${JSON.stringify(value)}`, input: value });
    return iso ?? z.NEVER;
  });

const turnSchema = z.object({
  role: z.enum(['user', 'assistant'], { error: 'must be user or assistant' }),
  content: z.string({ error: 'must be a string' }),
  has_answer: z.boolean({ error: 'must be true or false' }).nullish(),
});

const itemSchema = z
  .object({
    question_id: text(),
    question_type: z.string({ error: 'must be a string' }),
    question: text(),
    answer: text().nullish(),
    question_date: date(),
    haystack_dates: z.array(date(), { error: 'must be a list of dates' }),
    haystack_session_ids: z.array(text(), { error: 'must be a list of session ids' }).nullish(),
    haystack_sessions: z.array(z.array(turnSchema, { error: 'must be a list of turns' }), { error: 'must be a list of sessions' }),
    answer_session_ids: z.array(text(), { error: 'must be a list of session ids' }).nullish(),
  })
  .check((ctx) => {
    const { haystack_dates: dates, haystack_sessions: sessions, haystack_session_ids: ids } = ctx.value;
    if (dates.length !== sessions.length)
      ctx.issues.push({
        code: 'custom',
        path: ['haystack_dates'],
        message: `must give one date per session (${dates.length} dates, ${sessions.length} sessions)`,
        input: dates,
      });
    if (ids && ids.length !== sessions.length)
      ctx.issues.push({
        code: 'custom',
        path: ['haystack_session_ids'],
        message: `must give one id per session (${ids.length} ids, ${sessions.length} sessions)`,
        input: ids,
      });
  });

export type LongMemEvalItem = z.output<typeof itemSchema>;

/** Abstention questions: LongMemEval marks them with this suffix on their id. */
export const ABSTENTION_SUFFIX = '_abs';

/** One item checked against the official shape; errors name the item and field (`item 3.haystack_dates`). */
export function parseLongMemEvalItem(value: unknown, where: string): LongMemEvalItem {
  return parseWithSchema(itemSchema, value, { prefix: where });
}

/**
 * One item as a conversation with its question. Turn ids are `<session>:<turn>` (1-based places); the
 * retrieval targets follow LongMemEval's retrieval code: the user turns marked `has_answer` in answer sessions,
 * and the answer sessions holding one.
 */
export function longMemEvalConversation(item: LongMemEvalItem, skipped: SkippedQuestions): EvalConversation {
  const messages: NewMessage[] = [];
  const turnIds: string[] = [];
  const referenceLines: string[] = [];
  const sessionKeys: string[] = [];
  const evidence: string[] = [];
  const answerIds = new Set(item.answer_session_ids ?? []);
  // Without session ids (or answer session ids) every session holding an evidence turn is an answer session.
  const isAnswerSession = (k: number) => (item.haystack_session_ids && item.answer_session_ids ? answerIds.has(item.haystack_session_ids[k]!) : true);
  const correctTurns: string[] = [];
  const correctSessions = new Set<string>();
  item.haystack_sessions.forEach((session, k) => {
    const createdAt = item.haystack_dates[k]!;
    const sessionKey = String(k + 1);
    session.forEach((turn, t) => {
      const id = `${sessionKey}:${t + 1}`;
      messages.push({ role: turn.role, content: turn.content, createdAt, sessionId: `session_${sessionKey}` });
      turnIds.push(id);
      referenceLines.push(`${turn.role}: ${turn.content}`);
      sessionKeys.push(sessionKey);
      if (turn.has_answer !== true) return;
      evidence.push(id);
      if (turn.role === 'user' && isAnswerSession(k)) {
        correctTurns.push(id);
        correctSessions.add(sessionKey);
      }
    });
  });
  const questions = checkEvidence(
    turnIds,
    [
      {
        id: item.question_id,
        question: item.question,
        ...(item.answer !== undefined && item.answer !== null && item.answer !== '' ? { answer: item.answer } : {}),
        evidence,
        category: item.question_type,
        adversarial: item.question_id.endsWith(ABSTENTION_SUFFIX),
        askedAt: item.question_date,
        retrievalTargets: { sessions: [...correctSessions], turns: correctTurns },
      },
    ],
    skipped,
  );
  return { id: item.question_id, messages, turnIds, referenceLines, sessionKeys, questions };
}

/** A LongMemEval file as a dataset, item by item (the _M file is too large to parse whole); `limit` stops early. */
export async function loadLongMemEvalDataset(file: string, options: { limit?: number } = {}): Promise<QaDataset> {
  const skipped = noneSkipped();
  const conversations: EvalConversation[] = [];
  const ids = new Set<string>();
  let index = 0;
  for await (const value of streamJsonArray(file)) {
    if (options.limit !== undefined && conversations.length >= options.limit) break;
    const item = parseLongMemEvalItem(value, `item ${index}`);
    if (ids.has(item.question_id)) throw new InvalidArgumentError(`item ${index}.question_id`, `repeats "${item.question_id}"`);
    ids.add(item.question_id);
    const conversation = longMemEvalConversation(item, skipped);
    // An item whose question has no evidence turn is counted in `skipped`, not replayed.
    if (conversation.questions.length > 0) conversations.push(conversation);
    index++;
  }
  return { name: 'longmemeval', conversations, skipped };
}
