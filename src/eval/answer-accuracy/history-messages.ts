/**
 * The conversation as the answer model reads it, pure: Chat Completions messages, a message of the conversation
 * opening with its time (`[2023-05-21 19:50] `) when it differs from the message before's (a session's turns share
 * one), so that questions about when can be answered whatever the method; memfold's own notes (the clip-archive)
 * keep their text, which carries its own times. Speakers' names are made fit for the API's `name` field. The prompts without memfold
 * are the newest whole messages that fit a budget (truncate-oldest), counted as chars/4 of what is sent.
 */
import type OpenAI from 'openai';
import type { ConversationMessage, NewMessage } from '../../conversation/types.js';
import { toChatMessages } from '../../openai/openai-messages.js';
import { truncateOldest } from '../baselines.js';

type HistoryMessage = Pick<ConversationMessage, 'role' | 'content'> &
  Partial<Pick<ConversationMessage, 'name' | 'toolCalls' | 'toolCallId' | 'kind'>> & {
    createdAt?: string | Date;
  };

/** `[YYYY-MM-DD HH:MM] ` of a message's time (UTC), or nothing without one. */
function timePrefix(createdAt: string | Date | undefined): string {
  if (createdAt === undefined) return '';
  const date = new Date(createdAt);
  return Number.isNaN(date.getTime()) ? '' : `[${date.toISOString().slice(0, 16).replace('T', ' ')}] `;
}

/** A speaker's name as OpenAI accepts it (`^[A-Za-z0-9_-]{1,64}$`): "Ana Maria" is sent as `Ana_Maria`. */
export function chatName(name: string): string | undefined {
  const clean = name.replace(/[^A-Za-z0-9_-]+/g, '_').slice(0, 64);
  return /[A-Za-z0-9]/.test(clean) ? clean : undefined;
}

export function datedChatMessages(messages: readonly HistoryMessage[]): OpenAI.Chat.ChatCompletionMessageParam[] {
  let last = '';
  const dated = messages.map((m) => {
    const { name, ...rest } = m;
    const named = name === undefined || chatName(name) === undefined ? rest : { ...rest, name: chatName(name)! };
    const note = m.kind === 'clip_archive' || m.kind === 'continuation';
    const time = timePrefix(m.createdAt);
    // A call-only turn has no text to date, and the API wants it empty.
    if (note || time === last || (m.content === '' && (m.toolCalls?.length ?? 0) > 0)) return named;
    last = time;
    return { ...named, content: `${time}${m.content}` };
  });
  return toChatMessages(dated);
}

/** Tokens of a chat message as sent: chars/4 of its JSON, rounded up (the eval's counting, close to any tokenizer's). */
export function chatMessageTokens(message: OpenAI.Chat.ChatCompletionMessageParam): number {
  return Math.ceil(JSON.stringify(message).length / 4);
}

export interface TruncatedHistory {
  messages: OpenAI.Chat.ChatCompletionMessageParam[];
  /** Messages left out, oldest first: 0 when the whole conversation fits. */
  dropped: number;
  tokens: number;
}

/** The newest whole messages of `messages` within `budget` tokens, each counted with its time (an upper bound), then dated. */
export function truncatedHistory(messages: readonly NewMessage[], budget: number): TruncatedHistory {
  const tokens = messages.map((m) => chatMessageTokens(datedChatMessages([m])[0]!));
  const kept = truncateOldest(tokens, budget).kept;
  const shown = datedChatMessages(kept.map((i) => messages[i]!));
  return { messages: shown, dropped: messages.length - kept.length, tokens: shown.reduce((n, m) => n + chatMessageTokens(m), 0) };
}
