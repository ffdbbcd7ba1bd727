/**
 * LangChain's `summarizationMiddleware` (langchain 1.x, `createAgent`) replaying a conversation, as a peer
 * for the summarizer-cost benchmark. The summarizer is a `ChatOpenAI` on the caller's OpenAI-compatible
 * server; the agent's own model is scripted: it answers each user turn with the conversation's next
 * assistant turn(s), so the thread holds exactly the conversation plus LangChain's summaries.
 */
import { BaseChatModel } from '@langchain/core/language_models/chat_models';
import { AIMessage, HumanMessage, type BaseMessage } from '@langchain/core/messages';
import type { ChatResult } from '@langchain/core/outputs';
import { ChatOpenAI } from '@langchain/openai';
import { createAgent, summarizationMiddleware } from 'langchain';
import type { NewMessage } from '../../../src/conversation/types.js';

export interface LangChainReplayOptions {
  /** OpenAI-compatible base URL of the summarizer (ends with `/v1`). */
  baseURL: string;
  /** Summarize once the thread holds this many tokens (`trigger: { tokens }`). */
  triggerTokens: number;
  /** Tokens kept verbatim after a summary (`keep: { tokens }`). */
  keepTokens: number;
  /** Tokens of a message list; the same counter the other policies use. */
  countTokens: (messages: BaseMessage[]) => number;
  /** `trimTokensToSummarize`; undefined keeps LangChain's default (4,000), `Infinity` turns trimming off. */
  trimTokensToSummarize?: number;
}

/** Answers every call with `next()`: the agent's model, scripted from the conversation; `seen` gets each prompt. */
class ScriptedChatModel extends BaseChatModel {
  constructor(
    private readonly next: () => AIMessage,
    private readonly seen: (prompt: BaseMessage[]) => void,
  ) {
    super({});
  }
  _llmType(): string {
    return 'scripted';
  }
  async _generate(messages: BaseMessage[]): Promise<ChatResult> {
    this.seen([...messages]);
    const message = this.next();
    return { generations: [{ message, text: String(message.content) }] };
  }
  override bindTools(): this {
    return this;
  }
}

/** True for the HumanMessage the middleware writes in place of the summarized messages. */
export function isLangChainSummary(message: BaseMessage): boolean {
  return message.additional_kwargs?.lc_source === 'summarization';
}

/** One call of the agent's model. */
export interface LangChainModelCall {
  /** Index of the first assistant turn the call answers (the number of turns when it answers none: the last input). */
  answerAt: number;
  /** The thread the agent was invoked with: the previous thread and the new input. */
  thread: BaseMessage[];
  /** What the model was sent: the thread after the middleware (summarized when it reached the trigger). */
  prompt: BaseMessage[];
}

export interface LangChainReplay {
  /** The thread after the last turn: LangChain's summary (if any) and the messages it kept. */
  thread: BaseMessage[];
  /** Id of the thread message that holds turn i (consecutive assistant turns share one answer). */
  turnIds: string[];
  /** Every call of the agent's model, in order. */
  calls: LangChainModelCall[];
}

/** Replays `messages`: user turns are the agent's input, assistant turns its scripted answers. */
export async function replayWithLangChain(messages: readonly NewMessage[], options: LangChainReplayOptions): Promise<LangChainReplay> {
  let reply = new AIMessage('');
  const prompts: BaseMessage[][] = [];
  const summarizer = new ChatOpenAI({ model: 'fake', apiKey: 'unused', configuration: { baseURL: options.baseURL }, maxRetries: 0 });
  const agent = createAgent({
    model: new ScriptedChatModel(
      () => reply,
      (prompt) => prompts.push(prompt),
    ),
    tools: [],
    middleware: [
      // @ts-expect-error LangChain's middleware types are written without exactOptionalPropertyTypes (which memfold turns on).
      summarizationMiddleware({
        model: summarizer,
        trigger: { tokens: options.triggerTokens },
        keep: { tokens: options.keepTokens },
        tokenCounter: options.countTokens,
        // LangChain has no "off": a limit no thread reaches keeps every message.
        ...(options.trimTokensToSummarize === undefined ? {} : { trimTokensToSummarize: Math.min(options.trimTokensToSummarize, Number.MAX_SAFE_INTEGER) }),
      }),
    ],
  });
  let thread: BaseMessage[] = [];
  const turnIds: string[] = [];
  const calls: LangChainModelCall[] = [];
  for (let i = 0; i < messages.length; ) {
    const input: BaseMessage[] = [];
    for (; i < messages.length && messages[i]!.role !== 'assistant'; i++) {
      input.push(new HumanMessage({ id: `turn-${i}`, content: messages[i]!.content, ...name(messages[i]!) }));
      turnIds.push(`turn-${i}`);
    }
    const answers: NewMessage[] = [];
    const first = i;
    for (; i < messages.length && messages[i]!.role === 'assistant'; i++) {
      answers.push(messages[i]!);
      turnIds.push(`turn-${first}`);
    }
    // Consecutive assistant turns become one answer (the agent answers once per input).
    // LangChain names every answer after the agent ("model"), whatever name the message had.
    reply = new AIMessage({ id: `turn-${first}`, content: answers.map((m) => m.content).join('\n') });
    if (input.length === 0) {
      thread.push(reply);
      continue;
    }
    const sent = [...thread, ...input];
    const before = prompts.length;
    const state = await agent.invoke({ messages: sent });
    for (const prompt of prompts.slice(before)) calls.push({ answerAt: first, thread: sent, prompt });
    thread = state.messages;
  }
  return { thread, turnIds, calls };
}

function name(message: NewMessage): { name?: string } {
  return message.name ? { name: message.name } : {};
}
