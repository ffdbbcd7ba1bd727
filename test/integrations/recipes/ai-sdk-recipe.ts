import { generateText, wrapLanguageModel, type LanguageModel } from 'ai';
import type { Memfold } from '../../../src/index.js';
import { memfoldMiddleware } from '../../../src/integrations/ai-sdk.js';

export async function reply(memfold: Memfold, model: Exclude<LanguageModel, string>, conversationId: string, text: string) {
  const assistant = wrapLanguageModel({ model, middleware: memfoldMiddleware({ memfold, conversationId }) });
  const result = await generateText({ model: assistant, system: 'You are a concise assistant.', prompt: text });
  return result.text; // memfold stored the question and the answer, and compacted when the context was full
}
