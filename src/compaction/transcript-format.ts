/**
 * The text form of messages that summarizers read and transcripts archive:
 *
 *   [2023-05-08T13:56:00.000Z] user(Caroline): I went to a support group yesterday.
 *     and continuation lines are indented by two spaces
 *   [2023-05-08T13:57:10.000Z] assistant: Let me look that up.
 *     -> call search_flights#call_1 {"from":"SFO"}
 *   [2023-05-08T13:57:11.000Z] tool(search_flights)#call_1: {"flights":[]}
 *
 * Every message starts a line at column 0 with its date and speaker (archived text should carry both);
 * everything from the message itself is indented, so no content can start a line that parses as a
 * new message, a batch header or a clip-archive marker.
 */
import type { ConversationMessage, Role } from '../agent/types.js';

export interface TranscriptLine {
  createdAt: string;
  role: Role;
  name?: string;
  toolCallId?: string;
  /** The message text with the indentation removed. */
  content: string;
  toolCalls: Array<{ id: string; name: string; arguments: string }>;
}

const INDENT = '  ';
const HEAD = /^\[([^\]\n]+)\] (system|user|assistant|tool)(?:\(([^()\n]*)\))?(?:#(\S+))?: ?(.*)$/;
const CALL = /^ {2}-> call ([^#\s]+)#(\S+) ?(.*)$/;

/** Names and ids go inside the head line: strip what would break its grammar. */
function safeToken(value: string): string {
  return value.replace(/[()\[\]#:\s]+/g, '_');
}

function indentLines(text: string): string[] {
  return text.split(/\r?\n/).map((line) => INDENT + line);
}

export function renderMessage(message: Pick<ConversationMessage, 'role' | 'content' | 'createdAt' | 'name' | 'toolCallId' | 'toolCalls'>): string {
  const name = message.name ? `(${safeToken(message.name)})` : '';
  const callId = message.role === 'tool' && message.toolCallId ? `#${safeToken(message.toolCallId)}` : '';
  const [first = '', ...rest] = indentLines(message.content);
  const lines = [`[${message.createdAt}] ${message.role}${name}${callId}: ${first.slice(INDENT.length)}`, ...rest];
  for (const call of message.toolCalls ?? []) {
    const args = call.function.arguments.replace(/\r?\n/g, ' ');
    lines.push(`${INDENT}-> call ${safeToken(call.function.name)}#${safeToken(call.id)} ${args}`);
  }
  return lines.join('\n');
}

export function renderTranscript(messages: ReadonlyArray<Parameters<typeof renderMessage>[0]>): string {
  return messages.map(renderMessage).join('\n');
}

/** Parse text produced by `renderTranscript` back into lines (used by the extractive summarizer). */
export function parseTranscript(text: string): TranscriptLine[] {
  const out: TranscriptLine[] = [];
  for (const raw of text.split(/\r?\n/)) {
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
      current.content += '\n' + (raw.startsWith(INDENT) ? raw.slice(INDENT.length) : raw);
    }
  }
  return out;
}
