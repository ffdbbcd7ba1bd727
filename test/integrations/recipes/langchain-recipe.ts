import type { BaseChatModel } from '@langchain/core/language_models/chat_models';
import { createAgent, HumanMessage } from 'langchain';
import type { Memfold } from '../../../src/index.js';
import { memfoldSummarizationMiddleware } from '../../../src/integrations/langchain.js';

export async function ask(memfold: Memfold, model: BaseChatModel, threadId: string, text: string) {
  const agent = createAgent({ model, tools: [], middleware: [memfoldSummarizationMiddleware({ memfold })] });
  const { messages } = await agent.invoke({ messages: [new HumanMessage(text)] }, { configurable: { thread_id: threadId } });
  return messages.at(-1)?.text; // the state holds memfold's context: its notes, then the recent messages
}
