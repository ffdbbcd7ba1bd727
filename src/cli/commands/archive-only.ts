/**
 * `search`, `inspect` and `export` beside a running app. On the embedded default the app's process owns the PGlite
 * data directory (its lock), while LanceDB takes readers beside its writer: these commands then read the archive
 * alone, opened read-only (no table made, no index upkeep, every write refused), and say so in one line on stderr.
 * What only the live table holds (live messages and sessions, recorded costs) is left out; `list`, `context` and the
 * other commands still refuse with the lock's message. Loaded only when the store is found held.
 */
import type { Archive } from '../../archive/archive.js';
import { buildEmbedder, openArchive, remoteCallQueue } from '../../configured-adapters.js';
import type { RuntimeConfig } from '../../config.js';
import type { ArchiveEntry } from '../../conversation/types.js';
import { MemfoldError } from '../../errors.js';
import { exportConversation, type ExportRecord } from '../../erase-export/export-conversation.js';
import { createTokenCounter } from '../../tokens/create-token-counter.js';
import { createMemoryReadTool } from '../../tools/memory-read.js';
import { buildBatchTree, formatBatchTree } from '../batch-tree.js';
import type { ParsedCommand } from '../args.js';
import { printJson, printStored, type Output } from '../output.js';
import { runExport } from './export.js';
import { runInspectHtml } from './inspect-html.js';
import { runSearch } from './search.js';

/** What the PGlite lock refusal says of its holder (another process's lock, `pglite-lock-file.ts`); undefined for any other error. */
export function embeddedStoreHolder(error: unknown): { pid?: number } | undefined {
  if (!MemfoldError.isInstance(error) || error.code !== 'busy' || typeof error.details.lockFile !== 'string') return undefined;
  const { pid } = error.details;
  return typeof pid === 'number' ? { pid } : {};
}

/** The one line said before the archive-only answer. */
export function archiveOnlyNotice(command: string, holder: { pid?: number }): string {
  const who = holder.pid === undefined ? 'another process' : `process ${holder.pid}`;
  return `memfold ${command}: the embedded store is in use by ${who}: showing the archive only (read-only; live messages left out)`;
}

/** What `inspect --json` prints from the archive alone: the batches, and `archiveOnly` in place of the live parts. */
export interface ArchiveInspectReport {
  conversationId: string;
  batches: Array<Omit<ArchiveEntry, 'content'> & { chars: number }>;
  archiveOnly: true;
}

export interface ArchiveOnlyRun {
  command: ParsedCommand;
  config: RuntimeConfig;
  holder: { pid?: number };
  output: Output;
}

/** Runs `search`, `inspect` or `export` on the configured archive, opened read-only; the exit code. */
export async function runArchiveOnly({ command, config, holder, output }: ArchiveOnlyRun): Promise<number> {
  output.err(archiveOnlyNotice(command.command, holder));
  const onWarning = (message: string) => output.err(`memfold ${command.command}: warning: ${message}`);
  const archive = await openArchive(config, buildEmbedder(config, remoteCallQueue(config)), onWarning, { readOnly: true });
  try {
    return await dispatch(archive, { command, config, output });
  } finally {
    await archive.close();
  }
}

async function dispatch(archive: Archive, { command, config, output }: Omit<ArchiveOnlyRun, 'holder'>): Promise<number> {
  const { positionals: p, flags } = command;
  const json = flags.json === true;
  switch (command.command) {
    case 'search': {
      const tokens = createTokenCounter(config.assistantModel ? { model: config.assistantModel } : {});
      return runSearch((id) => createMemoryReadTool(archive, id, { countTokens: (text) => tokens.count(text) }), command, output);
    }
    case 'inspect': {
      // The page shows no live lane: the live rows are the held store's.
      if (typeof flags.html === 'string') return runInspectHtml({ archive, history: async () => [] }, p.conversation!, flags.html, { json }, output);
      return inspectArchive(archive, p.conversation!, { json }, output);
    }
    case 'export': {
      const records = (id: string) =>
        markedArchiveOnly(exportConversation({ archive, persistence: { loadHistory: async () => [] }, namespace: config.namespace }, id));
      return runExport({ exportConversation: records }, p.conversation!, typeof flags.out === 'string' ? { out: flags.out } : {}, output);
    }
    default:
      throw new MemfoldError('invalid_argument', `memfold ${command.command} needs the live store`);
  }
}

/** `inspect` from the archive: the batch tree, then a line saying the live sessions were not read. */
async function inspectArchive(archive: Pick<Archive, 'list'>, conversationId: string, options: { json: boolean }, output: Output): Promise<number> {
  const batches = await archive.list({ conversationId, kind: 'summary' });
  const report: ArchiveInspectReport = {
    conversationId,
    batches: batches.map(({ content, ...rest }) => ({ ...rest, chars: content.length })),
    archiveOnly: true,
  };
  if (options.json) {
    printJson(output, report);
    return 0;
  }
  const tree = report.batches.length > 0 ? formatBatchTree(buildBatchTree(report.batches)) : `conversation ${conversationId} has no archived batches`;
  printStored(output, `${tree}\nlive sessions: not read (the embedded store is in use)`);
  return 0;
}

/** The export's records, its header marked `archiveOnly`: a file written beside a running app says it holds no live rows. */
async function* markedArchiveOnly(records: AsyncIterable<ExportRecord>): AsyncGenerator<ExportRecord> {
  for await (const record of records) yield record.kind === 'conversation' ? ({ ...record, archiveOnly: true } as ExportRecord) : record;
}
