/**
 * `memfold/langchain`: the LangChain integration, a subpath of its own so `import 'memfold'` never loads LangChain.
 */
export { memfoldSummarizationMiddleware, type MemfoldSummarizationOptions, type TriggerCondition } from './langchain-middleware.js';
export type { MemfoldHost } from './memfold-host.js';
export { fromLangChainMessages, isMemfoldNote, MEMFOLD_NOTE, toLangChainMessages, type LangChainMessagesOptions } from './langchain-messages.js';
