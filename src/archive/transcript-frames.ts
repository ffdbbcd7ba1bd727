/**
 * Format 2 of an archived transcript: each message's text is stored once, in the entry's searchable `content`, and
 * the messages as a compact list of frames that point into it. Pure but for the memo of frames last written.
 *
 * A frame is `[fields, text?, ...arguments]`: `fields` is the message with every field as appended, but for its
 * text (and its tool calls' arguments) set to null where a reference replaces it; `text` and `arguments` are those
 * references (0 where the field kept its value). A reference is a list of `gap, length` number pairs and literal
 * strings, concatenated in order: a pair takes `length` UTF-16 units of `content` starting `gap` units after the end
 * of the row's previous pair (pairs only move forward, through the messages in order, text before arguments).
 *
 * Nothing here knows how a transcript line is rendered: a text is cut at its line breaks and each piece looked for a
 * little ahead in `content`; a piece not found there (the line renders it otherwise), short, or holding a lone
 * surrogate (stored text turns it into U+FFFD) is kept as a literal. What is rebuilt is therefore the message as
 * appended, field for field and in the same key order, whatever `content` says.
 */
import type { ConversationMessage } from '../conversation/types.js';
import { MemfoldError } from '../errors.js';

/** A reference: `gap, length` pairs into the content and literal strings. */
type Ref = Array<number | string>;
type Frame = [fields: Record<string, unknown>, ...refs: Array<Ref | 0>];

/** Every line break a rendered line may follow with an indent or turn into a space (the transcript format's set). */
const LINE_BREAK = /\r\n|[\n\v\f\r\x1c-\x1e\x85\u2028\u2029]/g;
const LONE_SURROGATE = /\p{Cs}/u;
/** A piece shorter than this stays literal: a pair would save little, and a short piece may match too early. */
const MIN_REFERENCED = 8;
/** How far past the previous pair a piece is looked for: a message's head, the call lines before it. */
const LOOKAHEAD = 2048;

interface Cursor {
  at: number;
}

/** `content` units of `piece` a little ahead of the cursor, or -1. */
function find(content: string, piece: string, cursor: Cursor): number {
  const index = content.slice(cursor.at, cursor.at + piece.length + LOOKAHEAD).indexOf(piece);
  return index < 0 ? -1 : cursor.at + index;
}

function pushLiteral(ref: Ref, text: string): void {
  if (text === '') return;
  const last = ref.length - 1;
  if (typeof ref[last] === 'string') ref[last] += text;
  else ref.push(text);
}

function pushPair(ref: Ref, cursor: Cursor, at: number, length: number): void {
  const last = ref.length - 1;
  // Adjacent to the previous pair (a line and its break, then the next line): one longer pair.
  if (at === cursor.at && last >= 1 && typeof ref[last] === 'number' && typeof ref[last - 1] === 'number') ref[last] = (ref[last] as number) + length;
  else ref.push(at - cursor.at, length);
  cursor.at = at + length;
}

/** Place `piece` and the break after it: together when the content has both, else the piece and a literal break. */
function placePiece(content: string, ref: Ref, cursor: Cursor, piece: string, lineBreak: string): void {
  if (piece.length < MIN_REFERENCED || LONE_SURROGATE.test(piece)) {
    pushLiteral(ref, piece + lineBreak);
    return;
  }
  const whole = lineBreak === '' ? -1 : find(content, piece + lineBreak, cursor);
  if (whole >= 0) {
    pushPair(ref, cursor, whole, piece.length + lineBreak.length);
    return;
  }
  const alone = find(content, piece, cursor);
  if (alone >= 0) pushPair(ref, cursor, alone, piece.length);
  else pushLiteral(ref, piece);
  pushLiteral(ref, lineBreak);
}

/** A reference for `text`, or undefined when no piece of it is in `content` (the text is then kept as it is). */
function reference(content: string, text: string, cursor: Cursor): Ref | undefined {
  const ref: Ref = [];
  let from = 0;
  for (const lineBreak of text.matchAll(LINE_BREAK)) {
    placePiece(content, ref, cursor, text.slice(from, lineBreak.index), lineBreak[0]);
    from = lineBreak.index + lineBreak[0].length;
  }
  placePiece(content, ref, cursor, text.slice(from), '');
  return ref.some((item) => typeof item === 'number') ? ref : undefined;
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return value !== null && typeof value === 'object' && !Array.isArray(value);
}

function frameOf(content: string, message: ConversationMessage, cursor: Cursor): Frame {
  const fields: Record<string, unknown> = { ...message };
  const refs: Array<Ref | 0> = [];
  const text = typeof message.content === 'string' ? reference(content, message.content, cursor) : undefined;
  if (text) fields.content = null;
  refs.push(text ?? 0);
  if (Array.isArray(message.toolCalls)) {
    fields.toolCalls = message.toolCalls.map((call: unknown) => {
      const fn = isRecord(call) ? call.function : undefined;
      const args = isRecord(fn) && typeof fn.arguments === 'string' ? reference(content, fn.arguments, cursor) : undefined;
      refs.push(args ?? 0);
      return args ? { ...(call as Record<string, unknown>), function: { ...(fn as Record<string, unknown>), arguments: null } } : call;
    });
  }
  while (refs.at(-1) === 0) refs.pop();
  return [fields, ...refs];
}

/** The frames of `messages` against `content`, as stored (JSON). */
function encode(content: string, messages: readonly ConversationMessage[]): string {
  const cursor: Cursor = { at: 0 };
  return JSON.stringify(messages.map((message) => frameOf(content, message, cursor)));
}

/** The frames each transcript was last written as, held weakly (as long as the entry's messages live). */
const written = new WeakMap<readonly ConversationMessage[], { content: string; frames: string }>();

/** A transcript's stored frames, encoded afresh for a write and remembered for that write's read-back. */
export function framesJson(content: string, messages: readonly ConversationMessage[]): string {
  const frames = encode(content, messages);
  written.set(messages, { content, frames });
  return frames;
}

/** The frames a write stored for these messages and content (encoded again when no write of this process saw them). */
export function writtenFrames(content: string, messages: readonly ConversationMessage[]): string {
  const memo = written.get(messages);
  return memo !== undefined && memo.content === content ? memo.frames : encode(content, messages);
}

function badFrames(why: string): MemfoldError {
  return new MemfoldError('archive_error', `Archived transcript frames are damaged: ${why}`);
}

function resolve(content: string, ref: unknown, cursor: Cursor): string {
  if (!Array.isArray(ref)) throw badFrames('a reference is not a list');
  let text = '';
  for (let i = 0; i < ref.length; i++) {
    const item: unknown = ref[i];
    if (typeof item === 'string') {
      text += item;
      continue;
    }
    const length: unknown = ref[++i];
    const start = cursor.at + (item as number);
    if (!Number.isInteger(item) || !Number.isInteger(length) || (item as number) < 0 || (length as number) < 0) throw badFrames('a pair is not two counts');
    if (start + (length as number) > content.length) throw badFrames('a pair reaches past the content');
    text += content.slice(start, start + (length as number));
    cursor.at = start + (length as number);
  }
  return text;
}

function messageOf(content: string, frame: unknown, cursor: Cursor): ConversationMessage {
  if (!Array.isArray(frame) || !isRecord(frame[0])) throw badFrames('a frame is not [fields, ...references]');
  const [fields, text = 0, ...args] = frame as Frame;
  const message: Record<string, unknown> = { ...fields };
  if (text !== 0) message.content = resolve(content, text, cursor);
  if (args.length > 0) {
    if (!Array.isArray(fields.toolCalls)) throw badFrames('argument references without tool calls');
    message.toolCalls = fields.toolCalls.map((call: Record<string, unknown>, i) => {
      const ref = args[i] ?? 0;
      if (ref === 0) return call;
      return { ...call, function: { ...(call.function as Record<string, unknown>), arguments: resolve(content, ref, cursor) } };
    });
  }
  return message as unknown as ConversationMessage;
}

/** The messages the frames of a row describe, rebuilt from its content. */
export function messagesFromFrames(content: string, frames: string): ConversationMessage[] {
  const parsed: unknown = JSON.parse(frames);
  if (!Array.isArray(parsed)) throw badFrames('not a list of frames');
  const cursor: Cursor = { at: 0 };
  return parsed.map((frame) => messageOf(content, frame, cursor));
}
