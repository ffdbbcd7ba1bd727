/**
 * Step 4, the only step that calls the model: chunk-and-fold. Chunk k is summarized with the
 * summary of the chunks before it as context, so each summary can build on, instead of repeat,
 * what is already archived. Outputs longer than maxSummaryTokens are cut.
 */
import type { Completion, ModelProvider } from '../model/model-provider.js';
import type { TokenCounter } from '../tokens/token-counter.js';
import { clipText } from './chunk.js';
import { buildFoldRequest, interpolatePrompt } from './prompt.js';

export interface FoldStep {
  text: string;
  completion: Completion;
}

export interface FoldOptions {
  model: ModelProvider;
  tokens: TokenCounter;
  prompt: string;
  maxSummaryTokens: number;
  signal?: AbortSignal;
  onStep?: (done: number, total: number) => void;
}

/** The system prompt as sent for a given output budget. */
export function summarizerSystemPrompt(prompt: string, maxSummaryTokens: number): string {
  return interpolatePrompt(prompt, { maxTokens: maxSummaryTokens });
}

export async function foldTranscripts(
  transcripts: readonly string[],
  previousSummary: string | undefined,
  options: FoldOptions,
): Promise<FoldStep[]> {
  const system = summarizerSystemPrompt(options.prompt, options.maxSummaryTokens);
  const steps: FoldStep[] = [];
  let summarySoFar = previousSummary;
  for (const transcript of transcripts) {
    const user = buildFoldRequest(transcript, summarySoFar);
    const completion = await options.model.complete({
      system,
      messages: [{ role: 'user', content: user }],
      maxOutputTokens: options.maxSummaryTokens,
      ...(options.signal ? { signal: options.signal } : {}),
    });
    if (!completion.fallback && !options.model.estimatesUsage) {
      options.tokens.observe(system + user, completion.usage.inputTokens);
    }
    const text = clipText(completion.text.trim(), options.maxSummaryTokens, (t) => options.tokens.count(t));
    steps.push({ text, completion });
    summarySoFar = text;
    options.onStep?.(steps.length, transcripts.length);
  }
  return steps;
}
