/**
 * Which conversations an MCP server may reach, pure. A server is bound to one namespace when it opens its stores;
 * within it, to one conversation (`--conversation`) or to an explicit allow-list (`--allow`). With one conversation
 * the tools take no conversation argument; with a list, every call names one of the list. Nothing a client sends
 * can widen the scope: a conversation outside it is refused before any store is read.
 */
import { requireConversationId } from '../conversation/conversation-id.js';
import { InvalidArgumentError, MemfoldError } from '../errors.js';

export interface McpScope {
  /** The conversations the server may read (and, when writable, compact), in the order given. */
  readonly conversations: readonly string[];
  /** True when bound to one conversation: tool calls name none. */
  readonly single: boolean;
}

export interface McpScopeOptions {
  conversation?: string;
  allow?: readonly string[];
}

/** A refusal a tool call gets back as its answer (never a thrown protocol error). */
export class ScopeRefusal extends MemfoldError {
  static override readonly kind: string = 'memfold.ScopeRefusal';
  constructor(message: string) {
    super('invalid_argument', message);
    this.name = 'ScopeRefusal';
  }
}

/** A conversation of the scope: the one conversation-id rule, naming the flag's field. */
const checkId = (id: unknown, field: string): string => requireConversationId(id, field);

export function mcpScope(options: McpScopeOptions): McpScope {
  const { conversation, allow } = options;
  if (conversation !== undefined && allow !== undefined) throw new InvalidArgumentError('allow', 'give either one conversation or an allow-list, not both');
  if (conversation !== undefined) return Object.freeze({ conversations: Object.freeze([checkId(conversation, 'conversation')]), single: true });
  if (allow === undefined || allow.length === 0) {
    throw new InvalidArgumentError('conversation', 'an MCP server needs its scope: one conversation, or an allow-list of them');
  }
  const ids = allow.map((id, index) => checkId(id, `allow[${index}]`));
  return Object.freeze({ conversations: Object.freeze([...new Set(ids)]), single: false });
}

/**
 * The conversation a call reaches: the bound one (a `conversation` argument, if sent, must name it), or the
 * allow-list's entry the call names.
 */
export function scopedConversation(scope: McpScope, requested: unknown): string {
  if (scope.single) {
    const only = scope.conversations[0]!;
    if (requested === undefined || requested === null || requested === only) return only;
    throw new ScopeRefusal('Refused: this server serves one conversation only, and it is not the one named by `conversation`.');
  }
  if (typeof requested !== 'string' || requested.length === 0) {
    throw new ScopeRefusal(`Refused: \`conversation\` is required and must be one of: ${scope.conversations.join(', ')}.`);
  }
  if (!scope.conversations.includes(requested)) {
    throw new ScopeRefusal(`Refused: conversation ${JSON.stringify(requested)} is not in this server's scope (${scope.conversations.join(', ')}).`);
  }
  return requested;
}
