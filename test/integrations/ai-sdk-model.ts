/**
 * A scripted assistant for the AI SDK tests, on `MockLanguageModelV4`: it asks memory_read when the user asks for the
 * locker code, answers from the tool result it then gets, and otherwise acknowledges the user's last message.
 */
import { convertArrayToReadableStream, MockLanguageModelV4 } from 'ai/test';
import type { GenerateResult, PromptMessage, StreamPart } from '../../src/integrations/ai-sdk-types.js';

/** No input count unless a test gives one: memfold then counts the context on its own (no calibration). */
export const usage = (input?: number) => ({
  inputTokens: { total: input, noCache: input, cacheRead: undefined, cacheWrite: undefined },
  outputTokens: { total: 10, text: 10, reasoning: undefined },
});

export const textAnswer = (text: string): GenerateResult => ({
  content: [{ type: 'text', text }],
  finishReason: { unified: 'stop', raw: 'stop' },
  usage: usage(),
  warnings: [],
});

export const callAnswer = (toolName: string, input: unknown, toolCallId = 'call-1'): GenerateResult => ({
  content: [{ type: 'tool-call', toolCallId, toolName, input: JSON.stringify(input) }],
  finishReason: { unified: 'tool-calls', raw: 'tool_calls' },
  usage: usage(),
  warnings: [],
});

/** The text of a prompt message, tool results included. */
export function textOf(message: PromptMessage | undefined): string {
  if (!message) return '';
  if (typeof message.content === 'string') return message.content;
  return message.content
    .map((part) => (part.type === 'text' ? part.text : part.type === 'tool-result' && part.output.type === 'text' ? part.output.value : ''))
    .join('');
}

/** The scripted answer to a prompt. */
export function scripted(prompt: readonly PromptMessage[]): GenerateResult {
  const last = prompt.at(-1);
  if (last?.role === 'tool') {
    const code = /\d{4}-heron/.exec(textOf(last))?.[0] ?? 'not found';
    return textAnswer(`The locker code is ${code}.`);
  }
  const asked = textOf(last);
  if (asked.includes('locker code?')) return callAnswer('memory_read', { query: 'storage locker code' });
  return textAnswer(`Noted: ${asked.slice(0, 60)}`);
}

export function scriptedModel(): MockLanguageModelV4 {
  return new MockLanguageModelV4({ doGenerate: async ({ prompt }) => scripted(prompt) });
}

/** The same script, streamed: text in two deltas, a tool call as one part. */
export function streamingModel(): MockLanguageModelV4 {
  return new MockLanguageModelV4({
    doStream: async ({ prompt }) => {
      const answer = scripted(prompt);
      const parts: StreamPart[] = [{ type: 'stream-start', warnings: [] }];
      for (const part of answer.content) {
        if (part.type === 'text') {
          const half = Math.ceil(part.text.length / 2);
          parts.push({ type: 'text-start', id: 't' }, { type: 'text-delta', id: 't', delta: part.text.slice(0, half) });
          parts.push({ type: 'text-delta', id: 't', delta: part.text.slice(half) }, { type: 'text-end', id: 't' });
        } else if (part.type === 'tool-call') {
          parts.push({ type: 'tool-input-start', id: part.toolCallId, toolName: part.toolName });
          parts.push({ type: 'tool-input-delta', id: part.toolCallId, delta: part.input }, { type: 'tool-input-end', id: part.toolCallId });
          parts.push(part);
        }
      }
      parts.push({ type: 'finish', finishReason: answer.finishReason, usage: answer.usage });
      return { stream: convertArrayToReadableStream(parts) };
    },
  });
}
