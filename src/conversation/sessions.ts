/**
 * Sessions, pure: where a conversation's sessions begin, as a function of its messages alone.
 *
 * A session is a run of messages. A new one starts at a unit (a message, or a tool call with its results) whose
 * first message carries a session id other than the current session's, or, when that message carries none, whose
 * time is more than `gapMinutes` after the message before it (0 turns the gap rule off). A message without a
 * session id otherwise continues the session before it; a given id is the caller's word, so a pause inside it starts
 * nothing. Sessions never split a tool call from its results: a result belongs to the session of its call.
 *
 * A session whose first message names none gets a derived id, `auto-{time of its first message}`: deterministic, and
 * unique within a conversation (a gap needs the time to move on). Derived from the live messages, so when a
 * compaction cut a session in two, the live rest is named after its own first message.
 */
import type { ConversationMessage } from './types.js';
import { unitStarts } from './turns.js';

type SessionMessage = Pick<ConversationMessage, 'role' | 'toolCalls' | 'toolCallId' | 'createdAt' | 'sessionId'>;

/** One session of a run of messages: its id and the index range [start, end) it covers. */
export interface SessionSpan {
  id: string;
  start: number;
  end: number;
  /** True when no message named the session: its id was derived from its first message's time. */
  derived: boolean;
}

/** The prefix of derived session ids. */
export const DERIVED_SESSION_PREFIX = 'auto-';

const MS_PER_MINUTE = 60_000;

/** The sessions of `messages` in order (none for no messages). `messages` is a history's body: no system prompt, no clip-archive. */
export function sessionSpans(messages: readonly SessionMessage[], gapMinutes: number): SessionSpan[] {
  const spans: SessionSpan[] = [];
  const gapMs = gapMinutes * MS_PER_MINUTE;
  for (const start of unitStarts(messages)) {
    const first = messages[start]!;
    const current = spans[spans.length - 1];
    if (current !== undefined && !startsSession(first, messages[start - 1]!, current, gapMs)) continue;
    if (current !== undefined) current.end = start;
    const given = first.sessionId;
    spans.push({ id: given ?? `${DERIVED_SESSION_PREFIX}${first.createdAt}`, start, end: messages.length, derived: given === undefined });
  }
  return spans;
}

function startsSession(first: SessionMessage, previous: SessionMessage, current: SessionSpan, gapMs: number): boolean {
  if (first.sessionId !== undefined) return first.sessionId !== current.id;
  return gapMs > 0 && Date.parse(first.createdAt) - Date.parse(previous.createdAt) > gapMs;
}

/** The session id of every message, in order. */
export function sessionIdsOf(spans: readonly SessionSpan[], length: number): string[] {
  const ids = new Array<string>(length);
  for (const span of spans) ids.fill(span.id, span.start, span.end);
  return ids;
}

/** Ids in order of first appearance, each once. */
export function distinctSessions(ids: Iterable<string | undefined>): string[] {
  const seen = new Set<string>();
  for (const id of ids) if (id !== undefined) seen.add(id);
  return [...seen];
}

/** A session of the live history, as `memfold inspect` shows it. */
export interface LiveSession {
  id: string;
  /** True when no message named it (`auto-` id from the time gap rule or the first message). */
  derived: boolean;
  /** Times of its first and last live messages. */
  start: string;
  end: string;
  messages: number;
  firstSeq: number;
  lastSeq: number;
}

/** The sessions of a live history (its leading system messages and the clip-archive are in none), oldest first. */
export function liveSessions(history: readonly ConversationMessage[], gapMinutes: number): LiveSession[] {
  const rest = history.filter((m) => m.kind !== 'clip_archive');
  const body = rest.slice(
    Math.max(
      0,
      rest.findIndex((m) => m.role !== 'system'),
    ),
  );
  if (rest.every((m) => m.role === 'system')) return [];
  return sessionSpans(body, gapMinutes).map((span) => {
    const first = body[span.start]!;
    const last = body[span.end - 1]!;
    return {
      id: span.id,
      derived: span.derived,
      start: first.createdAt,
      end: last.createdAt,
      messages: span.end - span.start,
      firstSeq: first.seq,
      lastSeq: last.seq,
    };
  });
}
