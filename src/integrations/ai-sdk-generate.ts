/**
 * `wrapGenerate` of the AI SDK middleware: one `doGenerate` of the app is one or more model calls, the middleware
 * running the model's memory_read calls in between, until the model answers or calls the app's tools.
 */
import { fromModelContent } from './ai-sdk-messages.js';
import { addUsage, type Session } from './ai-sdk-session.js';
import type { CallOptions, GenerateResult, ResultContent, Usage, WrappedModel } from './ai-sdk-types.js';

export async function generateWithMemory(session: Session, params: CallOptions, model: WrappedModel): Promise<GenerateResult> {
  const system = await session.begin(params);
  let usage: Usage | undefined;
  for (let round = 0; ; round++) {
    const offerRead = round < session.maxMemoryReads;
    const result = await model.doGenerate(await session.callParams(params, system, offerRead));
    usage = addUsage(usage, result.usage);
    const { reads, others } = await session.settle(params, fromModelContent(result.content), result.usage);
    if (reads > 0 && others === 0 && offerRead) continue;
    // The app sees its own calls only: memory_read's are answered already.
    const isRead = (part: ResultContent) => part.type === 'tool-call' && session.isInternal(params, { name: part.toolName });
    return { ...result, content: result.content.filter((part) => !isRead(part)), usage };
  }
}
