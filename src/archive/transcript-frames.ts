/**
 * Format 2 of an archived transcript: each message's text is stored once, in the entry's searchable `content`, and
 * the messages as compact frames that point into it. Pure but for the memo of the frames last written.
 *
 * The stored JSON is `[shapes, ...frames]`. `shapes` lists the key orders the messages use, once each; a frame is
 * `[shape, codes, ...values, ...argumentRefs]`: the message's values in its shape's key order, and `codes`, one
 * character per value (missing ones, at the end, are `.`), saying how to read each:
 * - `.` the value itself;
 * - `r` a reference into `content`: a list of `start, length` pairs (UTF-16 units) and literal strings, concatenated;
 * - `c` the entry's conversation id (the value is 0);
 * - `t` tool calls whose `function.arguments` are null where a reference replaces them: the references follow the
 *   values, one per call (0 where the call kept its arguments).
 * Text, time and arguments are referenced; ids and the rest are values.
 *
 * Nothing here knows how a transcript line is rendered: a text is cut at its line breaks and each piece looked for a
 * little ahead of the previous one in `content`; a piece not found there (the line renders it otherwise), short, or
 * holding a lone surrogate (stored text turns it into U+FFFD) is kept as a literal. What is rebuilt is therefore the
 * message as appended, field for field and in the same key order, whatever `content` says.
 */
import type { ConversationMessage } from '../conversation/types.js';
import { MemfoldError } from '../errors.js';

/** A reference: `start, length` pairs into the content and literal strings. */
type Ref = Array<number | string>;
type Json = Record<string, unknown>;

/** Every line break a rendered line may follow with an indent or turn into a space (the transcript format's set). */
const LINE_BREAK = /\r\n|[\n\v\f\r\x1c-\x1e\x85\u2028\u2029]/g;
/** A piece shorter than this stays literal: a pair would save little, and a short piece may match too early. */
const MIN_REFERENCED = 8;
/** How far past the previous piece one is looked for: a message's head, the call lines before it. */
const LOOKAHEAD = 2048;

/** Where the next piece is looked for: just past the last one found (pieces are found in order). */
interface Cursor {
  at: number;
}

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
  const previous = ref[last - 1];
  // Right after the previous pair (a line and its break, then the next line): one longer pair.
  if (last >= 1 && typeof ref[last] === 'number' && typeof previous === 'number' && previous + (ref[last] as number) === at) {
    ref[last] = (ref[last] as number) + length;
  } else ref.push(at, length);
  cursor.at = at + length;
}

/** Place `piece` and the break after it: together when the content has both, else the piece and a literal break. */
function placePiece(content: string, ref: Ref, cursor: Cursor, piece: string, lineBreak: string): void {
  if (piece.length < MIN_REFERENCED || !piece.isWellFormed()) {
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
function reference(content: string, text: unknown, cursor: Cursor): Ref | undefined {
  if (typeof text !== 'string') return undefined;
  const ref: Ref = [];
  let from = 0;
  // exec on the one global expression: matchAll would clone it for every text.
  LINE_BREAK.lastIndex = 0;
  for (let lineBreak = LINE_BREAK.exec(text); lineBreak !== null; lineBreak = LINE_BREAK.exec(text)) {
    placePiece(content, ref, cursor, text.slice(from, lineBreak.index), lineBreak[0]);
    from = lineBreak.index + lineBreak[0].length;
  }
  placePiece(content, ref, cursor, text.slice(from), '');
  return ref.some((item) => typeof item === 'number') ? ref : undefined;
}

function isRecord(value: unknown): value is Json {
  return value !== null && typeof value === 'object' && !Array.isArray(value);
}

/** Tool calls with their arguments referenced where the content holds them, or undefined when none is. */
function referencedCalls(content: string, calls: unknown, cursor: Cursor): { calls: unknown[]; refs: Array<Ref | 0> } | undefined {
  if (!Array.isArray(calls)) return undefined;
  const refs: Array<Ref | 0> = [];
  const kept = calls.map((call: unknown) => {
    const fn = isRecord(call) ? call.function : undefined;
    const ref = isRecord(fn) ? reference(content, fn.arguments, cursor) : undefined;
    refs.push(ref ?? 0);
    return ref ? { ...(call as Json), function: { ...(fn as Json), arguments: null } } : call;
  });
  return refs.some((ref) => ref !== 0) ? { calls: kept, refs } : undefined;
}

interface Encoding {
  content: string;
  conversationId: string;
  cursor: Cursor;
  /** The key orders met so far, in order of first use, and their indexes by name. */
  shapes: string[][];
  joined: Map<string, number>;
  json: Map<string, number>;
  /** The shape of the message encoded last. */
  last: number;
}

/** The index of a key order in `encoding.shapes`, added when new. */
function shapeOf(encoding: Encoding, keys: string[]): number {
  // Messages in a row mostly share their key order: the last one's is compared first, without naming it.
  const last = encoding.shapes[encoding.last];
  if (last !== undefined && last.length === keys.length && last.every((key, i) => key === keys[i])) return encoding.last;
  // Keys joined by line breaks name a shape; keys holding one are named by their JSON, in a map of their own.
  const plain = !keys.some((key) => key.includes('\n'));
  const byName = plain ? encoding.joined : encoding.json;
  const name = plain ? keys.join('\n') : JSON.stringify(keys);
  let shape = byName.get(name);
  if (shape === undefined) {
    shape = encoding.shapes.push(keys) - 1;
    byName.set(name, shape);
  }
  encoding.last = shape;
  return shape;
}

function frameOf(encoding: Encoding, message: ConversationMessage): unknown[] {
  const { content, cursor } = encoding;
  const fields = message as unknown as Json;
  // In the order a rendered line holds them: time, text, then call arguments.
  const time = reference(content, fields.createdAt, cursor);
  const text = reference(content, fields.content, cursor);
  const calls = referencedCalls(content, fields.toolCalls, cursor);
  const keys: string[] = [];
  const frame: unknown[] = [0, ''];
  let codes = '';
  let coded = 0;
  for (const key of Object.keys(fields)) {
    let value = fields[key];
    if (value === undefined) continue; // as JSON leaves it out
    const code =
      key === 'createdAt' && time
        ? 'r'
        : key === 'content' && text
          ? 'r'
          : key === 'toolCalls' && calls
            ? 't'
            : key === 'conversationId' && value === encoding.conversationId
              ? 'c'
              : '.';
    if (code === 'r') value = key === 'createdAt' ? time : text;
    else if (code === 't') value = calls!.calls;
    else if (code === 'c') value = 0;
    keys.push(key);
    frame.push(value);
    codes += code;
    if (code !== '.') coded = codes.length;
  }
  frame[0] = shapeOf(encoding, keys);
  frame[1] = codes.slice(0, coded);
  if (calls) frame.push(...calls.refs);
  return frame;
}

/** The frames of `messages` against `content`, as stored (JSON). */
function encode(content: string, messages: readonly ConversationMessage[], conversationId: string): string {
  const encoding: Encoding = { content, conversationId, cursor: { at: 0 }, shapes: [], joined: new Map(), json: new Map(), last: -1 };
  const frames = messages.map((message) => frameOf(encoding, message));
  return JSON.stringify([encoding.shapes, ...frames]);
}

/** The frames each transcript was last written as, held weakly (as long as the entry's messages live). */
const written = new WeakMap<readonly ConversationMessage[], { content: string; conversationId: string; frames: string }>();

/** A transcript's stored frames, encoded afresh for a write and remembered for that write's read-back. */
export function framesJson(content: string, messages: readonly ConversationMessage[], conversationId: string): string {
  const frames = encode(content, messages, conversationId);
  written.set(messages, { content, conversationId, frames });
  return frames;
}

/** The frames a write stored for these messages (encoded again when no write of this process saw them). */
export function writtenFrames(content: string, messages: readonly ConversationMessage[], conversationId: string): string {
  const memo = written.get(messages);
  const same = memo !== undefined && memo.content === content && memo.conversationId === conversationId;
  return same ? memo.frames : encode(content, messages, conversationId);
}

function badFrames(why: string): MemfoldError {
  return new MemfoldError('archive_error', `Archived transcript frames are damaged: ${why}`);
}

function resolve(content: string, ref: unknown): string {
  if (!Array.isArray(ref)) throw badFrames('a reference is not a list');
  let text = '';
  for (let i = 0; i < ref.length; i++) {
    const item: unknown = ref[i];
    if (typeof item === 'string') {
      text += item;
      continue;
    }
    const length: unknown = ref[++i];
    if (!Number.isInteger(item) || !Number.isInteger(length) || (item as number) < 0 || (length as number) < 0) throw badFrames('a pair is not two counts');
    if ((item as number) + (length as number) > content.length) throw badFrames('a pair reaches past the content');
    text += content.slice(item as number, (item as number) + (length as number));
  }
  return text;
}

function callsOf(content: string, calls: unknown, refs: unknown[]): unknown[] {
  if (!Array.isArray(calls)) throw badFrames('argument references without tool calls');
  return calls.map((call: unknown, i) => {
    const ref = refs[i] ?? 0;
    if (ref === 0) return call;
    if (!isRecord(call) || !isRecord(call.function)) throw badFrames('an argument reference for no call');
    return { ...call, function: { ...call.function, arguments: resolve(content, ref) } };
  });
}

function messageOf(content: string, conversationId: string, shapes: unknown[], frame: unknown): ConversationMessage {
  if (!Array.isArray(frame) || typeof frame[1] !== 'string') throw badFrames('a frame is not [shape, codes, ...values]');
  const keys = shapes[frame[0] as number];
  if (!Array.isArray(keys)) throw badFrames('a frame names no shape');
  const codes = frame[1];
  const message: Json = {};
  keys.forEach((key: string, i) => {
    const value: unknown = frame[2 + i];
    const code = codes[i] ?? '.';
    const field =
      code === 'r' ? resolve(content, value) : code === 'c' ? conversationId : code === 't' ? callsOf(content, value, frame.slice(2 + keys.length)) : value;
    // A plain assignment of `__proto__` would set the prototype, not the field JSON.parse made.
    if (key === '__proto__') Object.defineProperty(message, key, { value: field, enumerable: true, writable: true, configurable: true });
    else message[key] = field;
  });
  return message as unknown as ConversationMessage;
}

/** The messages the frames of a row describe, rebuilt from its content and conversation id. */
export function messagesFromFrames(content: string, frames: string, conversationId: string): ConversationMessage[] {
  const parsed: unknown = JSON.parse(frames);
  if (!Array.isArray(parsed) || !Array.isArray(parsed[0])) throw badFrames('not [shapes, ...frames]');
  const [shapes, ...rest] = parsed as [unknown[], ...unknown[]];
  return rest.map((frame) => messageOf(content, conversationId, shapes, frame));
}
