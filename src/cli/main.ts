/**
 * The `memfold` command: parse arguments, build the library with createMemfold, call it, print.
 * Returns the exit code; errors are printed as one line naming what was wrong.
 */
import { readFileSync } from 'node:fs';
import type { CompactionSettings } from '../config.js';
import { MemfoldError, errorMessage } from '../errors.js';
import { createMemfold, type Memfold } from '../memfold.js';
import { buildBatchTree, formatBatchTree } from './batch-tree.js';
import { parseArgs, usage, type ParsedCommand } from './args.js';
import { runDemo } from './commands/demo.js';
import { runEval } from './commands/eval.js';
import { runImport } from './commands/import.js';
import { formatContext, printJson, processOutput, type Output } from './output.js';

/** The demo's context window: small, so that a few hundred turns fold into several depths. */
export const DEMO_CONTEXT_WINDOW = 4_096;

function version(): string {
  const pkg = JSON.parse(readFileSync(new URL('../../package.json', import.meta.url), 'utf8')) as { version: string };
  return pkg.version;
}

async function dispatch(memfold: Memfold, parsed: ParsedCommand, output: Output): Promise<number> {
  const { positionals: p, flags } = parsed;
  const json = flags.json === true;
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
    case 'compact': {
      const result = await memfold.compact(p.conversation!, { force: flags.force === true, wait: true });
      if (json) printJson(output, { ...result, history: undefined });
      else if (result.compacted) output.out(`compacted: ${result.archivedMessages} messages archived in ${result.batches.length} batches (+${result.resummarized.length} re-summarized); tokens ${result.tokensBefore} -> ${result.tokensAfter}${result.fallbacks.length ? `; fallbacks: ${result.fallbacks.map((f) => f.reason).join(', ')}` : ''}`);
      else if (result.failed) output.err(`failed (${result.failureCode}): ${result.error}`);
      else output.out(`skipped: ${result.skipReason} (${result.tokensBefore} tokens, trigger ${memfold.compactor.settings.trigger}; --force compacts anyway)`);
      return result.failed ? 1 : 0;
    }
    case 'context': {
      const context = await memfold.context(p.conversation!);
      if (json) printJson(output, context);
      else output.out(context.length > 0 ? formatContext(context) : `conversation ${p.conversation} has no messages`);
      return 0;
    }
    case 'search': {
      const args: Record<string, unknown> = { query: p.query };
      for (const key of ['depth', 'kind', 'from', 'to', 'limit']) if (flags[key] !== undefined) args[key] = flags[key];
      const result = await memfold.memoryRead(flags.conversation as string).execute(args);
      if (json) printJson(output, result);
      else (result.ok ? output.out : output.err)(result.output);
      return result.ok ? 0 : 1;
    }
    case 'inspect': {
      const batches = await memfold.memory.list({ conversationId: p.conversation!, kind: 'summary' });
      if (json) printJson(output, batches.map(({ content, ...rest }) => ({ ...rest, chars: content.length })));
      else output.out(batches.length > 0 ? formatBatchTree(buildBatchTree(batches)) : `conversation ${p.conversation} has no archived batches`);
      return 0;
    }
    case 'resummarize': {
      const result = await memfold.compactor.resummarizeDepth(p.conversation!, flags.depth as number);
      if (json) printJson(output, result);
      else output.out(`created ${result.created.map((b) => `${b.label} (depth ${b.depth}, ${b.count} batches)`).join(', ')}`);
      return 0;
    }
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
  let parsed;
  try {
    parsed = parseArgs(argv);
  } catch (error) {
    output.err(`memfold: ${errorMessage(error)}\n\n${usage()}`);
    return 2;
  }
  if (parsed.command === 'help') {
    output.out(usage('topic' in parsed ? parsed.topic : undefined));
    return 0;
  }
  if (parsed.command === 'version') {
    output.out(version());
    return 0;
  }
  const command = parsed as ParsedCommand;
  // eval replays into a fresh store of its own: it opens no configured store.
  if (command.command === 'eval') {
    try {
      return await runEval(command, output);
    } catch (error) {
      output.err(`memfold eval: ${errorMessage(error)}`);
      return 1;
    }
  }
  const compaction: Partial<CompactionSettings> = {};
  if (command.command === 'demo') compaction.contextWindow = (command.flags.window as number | undefined) ?? DEMO_CONTEXT_WINDOW;
  else if (typeof command.flags.window === 'number') compaction.contextWindow = command.flags.window;
  let memfold: Memfold | undefined;
  try {
    // `reconcile` reports what it finishes or undoes, so opening must not do it first.
    memfold = await createMemfold({
      compaction,
      reconcileOnOpen: command.command !== 'reconcile',
      config: {
        ...(typeof command.flags.home === 'string' ? { home: command.flags.home } : {}),
        // --namespace goes through the same validation as MEMFOLD_NAMESPACE.
        ...(typeof command.flags.namespace === 'string' ? { namespace: command.flags.namespace } : {}),
      },
    });
    return await dispatch(memfold, command, output);
  } catch (error) {
    output.err(`memfold ${command.command}: ${errorMessage(error)}`);
    return 1;
  } finally {
    await memfold?.close().catch((error: unknown) => output.err(`memfold: closing failed: ${errorMessage(error)}`));
  }
}
