/**
 * memfold as AI SDK middleware: `wrapLanguageModel({ model, middleware: memfoldMiddleware({ memfold, conversationId }) })`
 * gives a model with memory. Each call stores the prompt's new messages and the answer, compacts, sends `context()`
 * instead of the prompt's history, and offers memory_read, which the middleware runs itself (the app registers
 * nothing): see src/integrations/README.md.
 */
import type { LanguageModelMiddleware } from 'ai';
import { generateWithMemory } from './ai-sdk-generate.js';
import { createSession, type MemfoldMiddlewareOptions } from './ai-sdk-session.js';
import { streamWithMemory } from './ai-sdk-stream.js';

export type { MemfoldHost, MemfoldMiddlewareOptions } from './ai-sdk-session.js';

export function memfoldMiddleware(options: MemfoldMiddlewareOptions): LanguageModelMiddleware {
  const session = createSession(options);
  return {
    specificationVersion: 'v4',
    wrapGenerate: ({ params, model }) => generateWithMemory(session, params, model),
    wrapStream: ({ params, model }) => streamWithMemory(session, params, model),
  };
}
