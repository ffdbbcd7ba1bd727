/**
 * `memfold/ai-sdk`: the AI SDK integration, a subpath of its own so `import 'memfold'` never loads `ai`.
 */
export { memfoldMiddleware, type MemfoldHost, type MemfoldMiddlewareOptions } from './ai-sdk-middleware.js';
export { fromModelContent, fromModelMessages, toModelMessages, type ModelMessagesOptions } from './ai-sdk-messages.js';
