/**
 * The tools `createMemfold` (`memfold.ts`) hands out for a conversation: memory_read over the archive, with a note
 * when its search could not use vectors, and compact over the compactor, with the conversation's settings as limits.
 */
import type { AsyncLocalStorage } from 'node:async_hooks';
import type { Archive } from './archive/archive.js';
import type { Compactor } from './compaction/compactor.js';
import { type Embedder, isSemanticEmbedder } from './embedding/embedder.js';
import { MemfoldError } from './errors.js';
import type { Memfold } from './memfold-api.js';
import type { PersistenceProvider } from './persistence/persistence-provider.js';
import type { TokenCounter } from './tokens/token-counter.js';
import { createCompactTool } from './tools/compact-tool.js';
import { createMemoryReadTool } from './tools/memory-read.js';

/** The line memory_read adds when its search could not use vectors. */
function vectorSearchNote(reasons: ReadonlySet<string>): string {
  return `Note: vector search was unavailable (${[...reasons].join('; ')}), so these results come from full-text search only.`;
}

/**
 * The embedder as memory_read's message ranking uses it: not called again in a call where it has already failed (the
 * archive's search noted it), so one call never makes a down endpoint fail twice (and trip its circuit breaker).
 */
function onceEachCall(
  embedder: Embedder,
  notes: AsyncLocalStorage<Set<string>>,
  onWarning: ((message: string, error: unknown) => void) | undefined,
): { embedder: Embedder; onWarning: (message: string, error: unknown) => void } {
  const skipped = new MemfoldError('embedding_error', `${embedder.id} already failed in this call`);
  return {
    embedder: {
      id: embedder.id,
      get dimensions() {
        return embedder.dimensions;
      },
      maxEmbeddingsPerCall: embedder.maxEmbeddingsPerCall,
      embed: (texts, options) => ((notes.getStore()?.size ?? 0) > 0 ? Promise.reject(skipped) : embedder.embed(texts, options)),
    },
    onWarning: (message, error) => {
      if (error !== skipped) onWarning?.(message, error);
    },
  };
}

/** `memoryRead`: memory_read for one conversation, its live messages left out of what it finds. */
export function memoryReadFactory(deps: {
  archive: Archive;
  persistence: PersistenceProvider;
  tokens: TokenCounter;
  maxTokens: number;
  /** Where the archive's warnings note why vector search was unavailable (`memfold-wiring.ts`). */
  notes: AsyncLocalStorage<Set<string>>;
  /** The configured embedder: a semantic one also ranks memory_read's candidate messages by meaning. */
  embedder?: Embedder | undefined;
  /** Told when that embedder fails during a memory_read call (the archive's warning handler). */
  onWarning?: (message: string, error: unknown) => void;
}): Memfold['memoryRead'] {
  const { archive, persistence, tokens, maxTokens, notes, embedder, onWarning } = deps;
  const semantic = embedder && isSemanticEmbedder(embedder) ? onceEachCall(embedder, notes, onWarning) : {};
  return (conversationId) => {
    const tool = createMemoryReadTool(archive, conversationId, {
      maxTokens,
      countTokens: (text) => tokens.count(text),
      live: () => persistence.loadHistory(conversationId),
      ...semantic,
    });
    return {
      definition: tool.definition,
      definitionFor: tool.definitionFor,
      // The archive reports a failed embedder through onWarning, from inside the search this call runs:
      // the async context ties the report to this call, so concurrent calls never see each other's notes.
      async execute(args, asked) {
        const reasons = new Set<string>();
        const result = await notes.run(reasons, () => tool.execute(args, asked));
        return reasons.size === 0 ? result : { ...result, output: `${result.output}\n\n${vectorSearchNote(reasons)}` };
      },
    };
  };
}

/** `compactTool`: compact for one conversation, its limits the conversation's settings unless given. */
export function compactToolFactory(deps: { compactor: Compactor; tokensAfterCompaction: ReadonlyMap<string, number> }): Memfold['compactTool'] {
  const { compactor, tokensAfterCompaction } = deps;
  return (conversationId, limits = {}) => {
    // Read when the tool runs, after its usage brought the stored settings in.
    const settingsLimits = () => {
      const { targetTokens, minFreedTokens } = compactor.settingsOf(conversationId);
      return { floorTokens: limits.floorTokens ?? targetTokens, minNewTokens: limits.minNewTokens ?? minFreedTokens };
    };
    return createCompactTool(
      {
        usage: (id) => compactor.usage(id),
        compact: (id, compactOptions) => compactor.compactStored(id, compactOptions),
        tokensAfterLastCompaction: (id) => tokensAfterCompaction.get(id),
      },
      conversationId,
      settingsLimits,
    );
  };
}
