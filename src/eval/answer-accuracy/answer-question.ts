/**
 * One question answered, then judged. The answer model gets the system prompt, the history and the question; with a
 * memory_read tool it may call it up to MAX_TOOL_CALLS times (the eval runs each call, with the question's date as
 * `asked.at`), then answers. The judge says yes or no against the reference with the rule for the question's kind.
 */
import type OpenAI from 'openai';
import { errorMessage } from '../../errors.js';
import { MEMORY_READ_DEFINITION, type ToolResult } from '../../tools/memory-read.js';
import type { EvalQuestion } from '../eval-types.js';
import { answerSystemPrompt, judgePrompt, MAX_TOOL_CALLS, readVerdict } from './answer-prompts.js';
import type { ChatEndpoint, UsageTally } from './chat-endpoint.js';

/** Output tokens an answer may take: room for a reasoned answer, a cap on a runaway one. */
export const ANSWER_MAX_TOKENS = 1_024;
/** Output tokens of a verdict: one word, with room for a model that adds a little. */
export const JUDGE_MAX_TOKENS = 16;

export interface ReadTool {
  execute(args: unknown, asked?: { at?: string }): Promise<ToolResult>;
}

/** One memory_read call the answer model made: its arguments as sent, and whether the tool answered. */
export interface ToolCallRecord {
  arguments: string;
  ok: boolean;
}

export interface JudgedAnswer {
  answer: string;
  toolCalls: ToolCallRecord[];
  /** The judge's verdict; false when the judge replied neither yes nor no (its reply is kept in `verdict`). */
  correct: boolean;
  verdict: string;
  /** Why no answer or no verdict was had (the endpoint failed after its retries); the question counts as wrong. */
  error?: string;
}

export interface AnswerInput {
  answerer: ChatEndpoint;
  judge: ChatEndpoint;
  history: readonly OpenAI.Chat.ChatCompletionMessageParam[];
  question: EvalQuestion;
  /** memory_read for this conversation (memfold); absent for the prompts without an archive. */
  tool?: ReadTool;
  usage: { answer: UsageTally; judge: UsageTally };
}

const TOOLS: OpenAI.Chat.ChatCompletionTool[] = [MEMORY_READ_DEFINITION as OpenAI.Chat.ChatCompletionTool];

async function runCalls(calls: readonly OpenAI.Chat.ChatCompletionMessageToolCall[], input: AnswerInput, made: ToolCallRecord[]) {
  const replies: OpenAI.Chat.ChatCompletionToolMessageParam[] = [];
  for (const call of calls) {
    const args = call.type === 'function' ? call.function.arguments : '';
    let content: string;
    if (call.type !== 'function' || call.function.name !== MEMORY_READ_DEFINITION.function.name) {
      content = 'Unknown tool: only memory_read is available.';
    } else if (made.length >= MAX_TOOL_CALLS) {
      content = `No more memory_read calls (at most ${MAX_TOOL_CALLS}): answer with what you have.`;
    } else {
      const asked = input.question.askedAt ? { at: input.question.askedAt } : {};
      const result = await input.tool!.execute(args, asked);
      made.push({ arguments: args, ok: result.ok });
      content = result.output;
    }
    replies.push({ role: 'tool', tool_call_id: call.id, content });
  }
  return replies;
}

/** The answer model's final text, after at most MAX_TOOL_CALLS memory_read calls. */
async function answer(input: AnswerInput, made: ToolCallRecord[]): Promise<string> {
  const system = answerSystemPrompt({ withTool: input.tool !== undefined, ...(input.question.askedAt ? { askedAt: input.question.askedAt } : {}) });
  const messages: OpenAI.Chat.ChatCompletionMessageParam[] = [
    { role: 'system', content: system },
    ...input.history,
    { role: 'user', content: input.question.question },
  ];
  // Each round either answers or calls; past the limit the tool is refused, so the rounds are bounded too.
  for (let round = 0; round <= MAX_TOOL_CALLS; round++) {
    const spent = made.length >= MAX_TOOL_CALLS;
    const reply = await input.answerer.complete({
      messages,
      maxTokens: ANSWER_MAX_TOKENS,
      tally: input.usage.answer,
      ...(input.tool ? { tools: TOOLS, toolChoice: spent ? ('none' as const) : ('auto' as const) } : {}),
    });
    const calls = reply.tool_calls ?? [];
    if (calls.length === 0 || !input.tool || spent) return reply.content ?? '';
    messages.push({ role: 'assistant', content: reply.content ?? null, tool_calls: calls });
    messages.push(...(await runCalls(calls, input, made)));
  }
  return '';
}

export async function answerAndJudge(input: AnswerInput): Promise<JudgedAnswer> {
  const made: ToolCallRecord[] = [];
  let text: string;
  try {
    text = await answer(input, made);
  } catch (error) {
    return { answer: '', toolCalls: made, correct: false, verdict: '', error: `answer: ${errorMessage(error)}` };
  }
  try {
    const reply = await input.judge.complete({
      messages: [{ role: 'user', content: judgePrompt({ question: input.question, response: text }) }],
      maxTokens: JUDGE_MAX_TOKENS,
      tally: input.usage.judge,
    });
    const verdict = reply.content ?? '';
    return { answer: text, toolCalls: made, correct: readVerdict(verdict) === true, verdict };
  } catch (error) {
    return { answer: text, toolCalls: made, correct: false, verdict: '', error: `judge: ${errorMessage(error)}` };
  }
}
