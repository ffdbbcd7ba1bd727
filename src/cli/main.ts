/**
 * The `memfold` command: parse arguments, build the library with createMemfold, call it, print.
 * Returns the exit code; errors are printed as one line naming what was wrong.
 */
import { existsSync, readFileSync } from 'node:fs';
import { JOB_DEFAULTS } from '../background/job-defaults.js';
import { resolveCompactionSettings, type CompactionSettings } from '../compaction/compaction-settings.js';
import { resolveRuntimeConfig, type RuntimeConfig } from '../config.js';
import { InvalidArgumentError, MemfoldError, errorMessage } from '../errors.js';
import { createMemfold, type Memfold } from '../memfold.js';
import { parseArgs, usage, type ParsedCommand } from './args.js';
import { createCompactionProgress, type CompactionProgress } from './compaction-progress.js';
import { runCompact } from './commands/compact.js';
import { runDemo } from './commands/demo.js';
import { checkImportFile } from './commands/import-check.js';
import { runImport } from './commands/import.js';
import { runInspect } from './commands/inspect.js';
import { runResume, runUsage } from './commands/usage.js';
import { runErase } from './commands/erase.js';
import { runExport } from './commands/export.js';
import { runList } from './commands/list.js';
import { runSearch } from './commands/search.js';
import { formatContext, printJson, printStored, processOutput, type Output } from './output.js';
import { requireStore } from './store-check.js';

/** The demo's context window: small, so that a few hundred turns fold into several depths. */
export const DEMO_CONTEXT_WINDOW = 4_096;

/** Commands that only read: they open the store without migrating it and never create one. */
const READ_COMMANDS: ReadonlySet<string> = new Set(['context', 'search', 'inspect', 'usage', 'list', 'export']);
/** Reads that can answer from the archive alone, beside a process holding the embedded store. */
const ARCHIVE_READS: ReadonlySet<string> = new Set(['search', 'inspect', 'export']);

function version(): string {
  // This file runs as src/cli/main.ts (tests) or dist/src/cli/main.js (the bin): the package root is two or three up.
  const file = ['../../package.json', '../../../package.json'].map((rel) => new URL(rel, import.meta.url)).find((url) => existsSync(url))!;
  const pkg = JSON.parse(readFileSync(file, 'utf8')) as { version: string };
  return pkg.version;
}

async function dispatch(memfold: Memfold, parsed: ParsedCommand, output: Output, progress?: CompactionProgress): Promise<number> {
  const { positionals: p, flags } = parsed;
  const json = flags.json === true;
  // A --window given on the call wins over the conversation's stored settings, in this process only.
  if ((parsed.command === 'compact' || parsed.command === 'usage') && typeof flags.window === 'number')
    memfold.configure({ contextWindow: flags.window }, { conversationId: p.conversation!, persist: false });
  switch (parsed.command) {
    case 'demo':
      return runDemo(memfold, { json, ...(typeof flags.turns === 'number' ? { turns: flags.turns } : {}) }, output);
    case 'migrate': {
      const report = await memfold.persistence.migrate();
      if (json) printJson(output, report);
      else output.out(report.applied.length > 0 ? `applied: ${report.applied.join(', ')}` : `up to date (${report.current.length} migrations)`);
      return 0;
    }
    case 'import':
      return runImport(memfold, p.file!, { json, ...(typeof flags.conversation === 'string' ? { conversation: flags.conversation } : {}) }, output);
    case 'compact':
      return runCompact(memfold, p.conversation!, { force: flags.force === true, json, ...(progress ? { progress } : {}) }, output);
    case 'context': {
      const context = await memfold.context(p.conversation!);
      if (json) printJson(output, context);
      else printStored(output, context.length > 0 ? formatContext(context) : `conversation ${p.conversation} has no messages`);
      return 0;
    }
    case 'usage':
      return runUsage(memfold, p.conversation!, { json }, output);
    case 'config': {
      const { runConfig } = await import('./commands/config.js');
      return runConfig(memfold, p.conversation!, { flags }, output);
    }
    case 'resume':
      return runResume(memfold, p.conversation!, { json }, output);
    case 'search':
      return runSearch((id) => memfold.memoryRead(id), parsed, output);
    case 'worker': {
      const { runWorker } = await import('./commands/worker.js');
      const { untilSignal } = await import('./until-signal.js');
      return runWorker(
        memfold,
        { concurrency: typeof flags.concurrency === 'number' ? flags.concurrency : JOB_DEFAULTS.workerConcurrency, until: untilSignal() },
        output,
      );
    }
    case 'inspect':
      return runInspect(memfold, p.conversation!, { json, ...(typeof flags.html === 'string' ? { html: flags.html } : {}) }, output);
    case 'resummarize': {
      const result = await memfold.compactor.resummarizeDepth(p.conversation!, flags.depth as number).catch((error: unknown) => {
        // A depth without two frontier batches to fold is a bad --depth, not a failure of the stores.
        throw InvalidArgumentError.isInstance(error) && error.field === 'depth' ? new InvalidArgumentError('--depth', ruleOf(error)) : error;
      });
      if (json) printJson(output, result);
      else output.out(`created ${result.created.map((b) => `${b.label} (depth ${b.depth}, ${b.count} batches)`).join(', ')}`);
      return 0;
    }
    case 'list':
      return runList(memfold, { json }, output);
    case 'export':
      return runExport(memfold, p.conversation!, typeof flags.out === 'string' ? { out: flags.out } : {}, output);
    case 'erase':
      return runErase(memfold, p.conversation!, { yes: flags.yes === true, json }, output);
    case 'reconcile': {
      const outcomes = await memfold.reconcile(flags.conversation as string | undefined);
      if (json) printJson(output, outcomes);
      else if (outcomes.length === 0) output.out('nothing to reconcile');
      else for (const o of outcomes) output.out(`${o.conversationId} ${o.operationId}: ${o.action} (${o.reason})`);
      return 0;
    }
    default:
      throw new MemfoldError('invalid_argument', `unknown command ${parsed.command}`);
  }
}

export async function main(argv: readonly string[], output: Output = processOutput): Promise<number> {
  let parsed: ReturnType<typeof parseArgs>;
  try {
    parsed = parseArgs(argv);
  } catch (error) {
    output.err(`memfold: ${errorMessage(error)}\n\n${usage()}`);
    return 2;
  }
  if (parsed.command === 'help') {
    // parseArgs has refused an unknown topic already.
    output.out(usage('topic' in parsed ? parsed.topic : undefined));
    return 0;
  }
  if (parsed.command === 'version') {
    output.out(version());
    return 0;
  }
  const command = parsed as ParsedCommand;
  // mcp serves until its client or a signal ends it, and opens the stores on the first tool call, not here.
  if (command.command === 'mcp') {
    const { runMcp } = await import('./commands/mcp.js');
    return runMcp(command, output, version());
  }
  // eval replays into a fresh store of its own: it opens no configured store.
  if (command.command === 'eval') {
    try {
      // Loaded only for this command: the evaluation code (datasets, metrics, reports) is no cost to the others.
      const { runEval } = await import('./commands/eval.js');
      return await runEval(command, output);
    } catch (error) {
      // A flag refused after parsing (`--dataset`, `--window`, ...) is a bad argument like any other: exit 2.
      const badFlag = InvalidArgumentError.isInstance(error) && error.field.startsWith('--');
      output.err(`memfold eval: ${errorMessage(error)}${badFlag ? `\n\n${usage('eval')}` : ''}`);
      return badFlag ? 2 : 1;
    }
  }
  const compaction: Partial<CompactionSettings> = {};
  if (command.command === 'demo') compaction.contextWindow = (command.flags.window as number | undefined) ?? DEMO_CONTEXT_WINDOW;
  else if (typeof command.flags.window === 'number') compaction.contextWindow = command.flags.window;
  if (typeof command.flags['session-gap'] === 'number') compaction.sessionGapMinutes = command.flags['session-gap'];
  try {
    // Checked before anything opens: a bad --window is a bad argument, not a failure of the store.
    resolveCompactionSettings(compaction);
  } catch (error) {
    output.err(`memfold: ${new InvalidArgumentError('--window', errorMessage(error)).message}\n\n${usage(command.command)}`);
    return 2;
  }
  const config: Partial<RuntimeConfig> = {
    ...(typeof command.flags.home === 'string' ? { home: command.flags.home } : {}),
    // --namespace goes through the same validation as MEMFOLD_NAMESPACE.
    ...(typeof command.flags.namespace === 'string' ? { namespace: command.flags.namespace } : {}),
  };
  return runOnStore({ command, compaction, config, output });
}

/** Open memfold for the command, run it, close it; beside an app holding the embedded store, a read may use the archive alone. */
async function runOnStore({
  command,
  compaction,
  config,
  output,
}: {
  command: ParsedCommand;
  compaction: Partial<CompactionSettings>;
  config: Partial<RuntimeConfig>;
  output: Output;
}): Promise<number> {
  const progress = command.command === 'compact' && output.progress ? createCompactionProgress(output.progress) : undefined;
  const reading = READ_COMMANDS.has(command.command);
  let memfold: Memfold | undefined;
  let resolved: RuntimeConfig | undefined;
  try {
    resolved = resolveRuntimeConfig(config);
    // Checked before anything opens: a read never makes a store where there is none, and a file that fails its
    // own rules (a line with no conversation, bad JSON) fails before a new home costs an `initdb`.
    if (reading) requireStore(resolved, 'live');
    if (command.command === 'import') await precheckImport(command, resolved);
    memfold = await createMemfold({
      compaction,
      config,
      // `reconcile` reports what it finishes or undoes, so opening must not do it first; a read writes
      // nothing (an interrupted compaction's messages are still live, so what it shows is whole).
      reconcileOnOpen: command.command !== 'reconcile' && !reading,
      // A read must not create tables in whatever database DATABASE_URL names.
      migrate: !reading,
      ...(command.command === 'reconcile' && command.flags['adopt-archive'] === true ? { adoptArchive: true } : {}),
      onEvent: (event) => {
        // Warnings (an embedding endpoint that fails, index upkeep that failed) are the operator's to see.
        if (event.type === 'warning') output.err(`memfold ${command.command}: warning: ${event.message}`);
        progress?.onEvent(event);
      },
    });
    return await dispatch(memfold, command, output, progress);
  } catch (error) {
    // Another process (the app) owns the embedded store: search, inspect and export read its archive beside it.
    const beside = memfold === undefined && resolved !== undefined ? await besideHolder({ error, command, config: resolved, output }) : undefined;
    if (beside !== undefined) return beside;
    output.err(`memfold ${command.command}: ${errorMessage(error)}`);
    return isBadArgument(error) ? 2 : 1;
  } finally {
    await memfold?.close().catch((error: unknown) => output.err(`memfold: closing failed: ${errorMessage(error)}`));
  }
}

/**
 * When opening failed on the PGlite lock of another process and the command can answer from the archive alone, its
 * exit code from there (`commands/archive-only.ts`, loaded only then); undefined otherwise.
 */
async function besideHolder({
  error,
  command,
  config,
  output,
}: {
  error: unknown;
  command: ParsedCommand;
  config: RuntimeConfig;
  output: Output;
}): Promise<number | undefined> {
  if (!ARCHIVE_READS.has(command.command)) return undefined;
  const { embeddedStoreHolder, runArchiveOnly } = await import('./commands/archive-only.js');
  const holder = embeddedStoreHolder(error);
  if (holder === undefined) return undefined;
  try {
    return await runArchiveOnly({ command, config, holder, output });
  } catch (failure) {
    output.err(`memfold ${command.command}: ${errorMessage(failure)}`);
    return isBadArgument(failure) ? 2 : 1;
  }
}

/** A refusal of what the command line said (`--depth`, `--home`, `<file>`): exit 2, as parseArgs' refusals. */
function isBadArgument(error: unknown): boolean {
  return InvalidArgumentError.isInstance(error) && /^(--|<)/.test(error.field);
}

/** The rule of an InvalidArgumentError, without its `Invalid argument <field>: ` prefix. */
function ruleOf(error: InvalidArgumentError): string {
  return error.message.slice(`Invalid argument ${error.field}: `.length);
}

/**
 * The import file's own rules (every line, ids within the file), before the store opens; what needs the store
 * (ids already used, a tool result answering a stored call) is checked again with it.
 */
async function precheckImport(command: ParsedCommand, config: RuntimeConfig): Promise<void> {
  const fallback = command.flags.conversation;
  await checkImportFile(undefined, command.positionals.file!, {
    maxMessageBytes: config.maxMessageBytes,
    ...(typeof fallback === 'string' ? { fallback } : {}),
  });
}
