/**
 * The text form of messages that summarizers read and transcripts archive:
 *
 *   [2023-05-08T13:56:00.000Z] user(Caroline): I went to a support group yesterday.
 *     and continuation lines are indented by two spaces
 *   [2023-05-08T13:57:10.000Z] assistant: Let me look that up.
 *   -> call search_flights#call_1 {"from":"SFO"}
 *   [2023-05-08T13:57:11.000Z] tool(search_flights)#call_1: {"flights":[]}
 *
 * Every message starts a line at column 0 with its date and speaker (archived text should carry both);
 * tool calls are column-0 `-> call` lines under it; every line of the message text is indented by two
 * spaces after each line break of whatever kind (CR, LS, NEL... kept as written), so no content can start
 * a line that parses as a new message, a tool call, a batch header or a clip-archive marker, for any reader.
 */
import type { ConversationMessage, Role } from '../../conversation/types.js';
import { framingField, LINE_BREAK } from './headers.js';

export interface TranscriptLine {
  createdAt: string;
  role: Role;
  name?: string;
  toolCallId?: string;
  /** The message text with the indentation removed (line breaks as written). */
  content: string;
  toolCalls: Array<{ id: string; name: string; arguments: string }>;
}

const INDENT = '  ';
const HEAD = /^\[([^\]\s]+)\] (system|user|assistant|tool)(?:\(([^()\s]*)\))?(?:#(\S+))?: ?(.*)$/;
const CALL = /^-> call ([^#\s]+)#(\S+) ?(.*)$/;
/** Splits text into lines and keeps each break, so content round-trips exactly. */
const SPLIT_KEEPING_BREAKS = new RegExp(`(${LINE_BREAK.source})`);
const ANY_BREAK = new RegExp(LINE_BREAK.source, 'g');

/** Names and ids go inside the head line: strip what would break its grammar. */
function safeToken(value: string): string {
  return value.replace(/[()[\]#:\s\p{C}]+/gu, '_');
}

/** `[line, break, line, break, line...]`: odd indexes are the breaks. */
function splitLines(text: string): string[] {
  return text.split(SPLIT_KEEPING_BREAKS);
}

export function renderMessage(message: Pick<ConversationMessage, 'role' | 'content' | 'createdAt' | 'name' | 'toolCallId' | 'toolCalls'>): string {
  const name = message.name ? `(${safeToken(message.name)})` : '';
  const callId = message.role === 'tool' && message.toolCallId ? `#${safeToken(message.toolCallId)}` : '';
  const parts = splitLines(message.content);
  let text = `[${framingField(message.createdAt)}] ${message.role}${name}${callId}: ${parts[0]}`;
  for (let i = 1; i < parts.length; i += 2) text += parts[i]! + INDENT + parts[i + 1]!;
  for (const call of message.toolCalls ?? []) {
    const args = call.function.arguments.replace(ANY_BREAK, ' ');
    text += `\n-> call ${safeToken(call.function.name)}#${safeToken(call.id)} ${args}`;
  }
  return text;
}

export function renderTranscript(messages: ReadonlyArray<Parameters<typeof renderMessage>[0]>): string {
  return messages.map(renderMessage).join('\n');
}

/** Parse text produced by `renderTranscript` back into lines (exported for readers of archived transcripts). */
export function parseTranscript(text: string): TranscriptLine[] {
  const out: TranscriptLine[] = [];
  const parts = splitLines(text);
  for (let i = 0; i < parts.length; i += 2) {
    const raw = parts[i]!;
    const lineBreak = i === 0 ? '\n' : parts[i - 1]!;
    const head = HEAD.exec(raw);
    if (head) {
      const line: TranscriptLine = { createdAt: head[1]!, role: head[2] as Role, content: head[5] ?? '', toolCalls: [] };
      if (head[3]) line.name = head[3];
      if (head[4]) line.toolCallId = head[4];
      out.push(line);
      continue;
    }
    const current = out[out.length - 1];
    if (!current) continue;
    const call = CALL.exec(raw);
    if (call) {
      current.toolCalls.push({ name: call[1]!, id: call[2]!, arguments: call[3] ?? '' });
    } else {
      current.content += lineBreak + (raw.startsWith(INDENT) ? raw.slice(INDENT.length) : raw);
    }
  }
  return out;
}
