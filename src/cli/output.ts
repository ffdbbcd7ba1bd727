/** Printing helpers shared by the commands: JSON for `--json`, readable text otherwise. */
import type { ConversationMessage } from '../agent/types.js';

export interface Output {
  out(text: string): void;
  err(text: string): void;
}

export const processOutput: Output = {
  out: (text) => process.stdout.write(text.endsWith('\n') ? text : `${text}\n`),
  err: (text) => process.stderr.write(text.endsWith('\n') ? text : `${text}\n`),
};

export function printJson(output: Output, value: unknown): void {
  output.out(JSON.stringify(value, null, 2));
}

export function formatMessage(message: ConversationMessage): string {
  const who = message.kind === 'clip_archive' ? 'system (clip-archive)' : `${message.role}${message.name ? ` (${message.name})` : ''}`;
  const calls = (message.toolCalls ?? []).map((c) => `  -> ${c.function.name}(${c.function.arguments})`);
  const body = message.content ? [message.content] : [];
  return [`── ${who} · ${message.createdAt} ──`, ...body, ...calls].join('\n');
}

export function formatContext(messages: readonly ConversationMessage[]): string {
  return messages.map(formatMessage).join('\n\n');
}
