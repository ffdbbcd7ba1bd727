/**
 * A scripted chat model for the LangChain tests: it calls memory_read when the user asks for the locker code, answers
 * from the tool result it then gets, and otherwise acknowledges the last message. LangChain's own fakes either make
 * no tool call per turn (`FakeListChatModel`, `FakeStreamingChatModel`) or answer with the whole prompt echoed
 * (`FakeToolCallingModel`), which would grow the history by the context at every turn.
 */
import { BaseChatModel } from '@langchain/core/language_models/chat_models';
import { AIMessage, type BaseMessage, ToolMessage } from '@langchain/core/messages';
import type { ChatResult } from '@langchain/core/outputs';

export class ScriptedChatModel extends BaseChatModel {
  readonly calls: BaseMessage[][] = [];

  constructor() {
    super({});
  }

  _llmType(): string {
    return 'scripted';
  }

  override bindTools(): this {
    return this;
  }

  async _generate(messages: BaseMessage[]): Promise<ChatResult> {
    this.calls.push(messages);
    const last = messages.at(-1);
    let message: AIMessage;
    if (last && ToolMessage.isInstance(last)) {
      message = new AIMessage(`The locker code is ${/\d{4}-heron/.exec(last.text)?.[0] ?? 'not found'}.`);
    } else if (last?.text.includes('locker code?')) {
      const call = { id: `read-${this.calls.length}`, name: 'memory_read', args: { query: 'storage locker code' }, type: 'tool_call' as const };
      message = new AIMessage({ content: '', tool_calls: [call] });
    } else {
      message = new AIMessage(`Noted: ${last?.text.slice(0, 60) ?? ''}`);
    }
    return { generations: [{ text: message.text, message }] };
  }
}
