/**
 * Argument parsing for the `memfold` command, pure: argv in, a parsed command or an error naming
 * the argument out.
 */
import { z } from 'zod';
import { JOB_DEFAULTS } from '../background/job-defaults.js';
import { parseWithSchema } from '../conversation/schema-issues.js';
import { InvalidArgumentError } from '../errors.js';
import { SESSION_SCOPES } from '../compaction/compaction-settings.js';
import { DATASETS } from '../eval/datasets/dataset-kinds.js';
import { EVAL_HELP } from './commands/eval-help.js';
import { CONFIG_FLAGS, CONFIG_HELP } from './commands/config-flags.js';
import { memoryReadParameters, parseMemoryReadArgs } from '../tools/memory-read-args.js';

/**
 * A flag: a switch (`--json`), or a value whose zod schema validates the text given and types it. Each flag's rule
 * lives here, once; an error names the flag (`--depth: must be an integer >= 0 (got "x")`).
 */
type FlagType = 'switch' | z.ZodType<string | number>;

const text = z.string();
/** An integer flag, at least `min`: the text must be a whole number as written. */
function int(min: number): z.ZodType<number> {
  return z
    .string()
    .refine((raw) => /^-?\d+$/.test(raw.trim()), { error: (issue) => `must be an integer >= ${min} (got ${JSON.stringify(issue.input)})` })
    .transform(Number)
    .pipe(z.number().min(min, { error: (issue) => `must be an integer >= ${min} (got ${issue.input})` }));
}
/** The kinds memory_read filters by, read from its own schema: `search --kind` and its help cannot offer another. */
const MEMORY_READ_KINDS = (memoryReadParameters() as { properties: { kind: { enum: [string, ...string[]] } } }).properties.kind.enum;
const kind = z.enum(MEMORY_READ_KINDS, {
  error: (issue) => `must be ${MEMORY_READ_KINDS.join(' or ')} (got ${JSON.stringify(issue.input)})`,
});

/**
 * `search`'s arguments go through memory_read's own parser before anything opens (its ranges, dates and
 * lengths), an error naming the flag as typed: `--from`, or `<query>`.
 */
function checkSearch(positionals: Record<string, string>, flags: Record<string, string | number | boolean>): void {
  const args: Record<string, unknown> = { query: positionals.query };
  for (const key of ['depth', 'kind', 'from', 'to', 'limit']) if (flags[key] !== undefined) args[key] = flags[key];
  try {
    parseMemoryReadArgs(args);
  } catch (error) {
    if (!InvalidArgumentError.isInstance(error)) throw error;
    const rule = error.message.slice(`Invalid argument ${error.field}: `.length);
    throw new InvalidArgumentError(error.field === 'query' ? '<query>' : `--${error.field}`, rule);
  }
}

interface CommandSpec {
  positionals: string[];
  flags: Record<string, FlagType>;
  required?: string[];
  summary: string;
  /** Lines `memfold help <command>` adds after the options. */
  help?: readonly string[];
  /** Rules across the arguments, checked after each one's own (throws InvalidArgumentError naming the argument). */
  check?: (positionals: Record<string, string>, flags: Record<string, string | number | boolean>) => void;
}

/** Options every command takes: where the stores live and which namespace of conversations to use. */
const COMMON: Record<string, FlagType> = { home: text, namespace: text, help: 'switch' };
const COMMON_HELP = [
  '  --home <dir>  embedded store folder (default $MEMFOLD_HOME or ./.memfold)',
  '  --namespace <name>  scope of conversations: the command sees no other (default $MEMFOLD_NAMESPACE or default)',
];

export const COMMANDS: Record<string, CommandSpec> = {
  demo: {
    positionals: [],
    flags: { turns: int(1), window: int(256), json: 'switch' },
    summary: 'replay a generated multi-session conversation with a small window, offline',
  },
  import: { positionals: ['file'], flags: { conversation: text, json: 'switch' }, summary: 'append messages from a JSONL file (one message a line)' },
  compact: { positionals: ['conversation'], flags: { force: 'switch', window: int(256), json: 'switch' }, summary: 'compact a stored conversation now' },
  context: { positionals: ['conversation'], flags: { json: 'switch' }, summary: 'print what the model would see' },
  usage: {
    positionals: ['conversation'],
    flags: { window: int(256), json: 'switch' },
    summary: "the context's tokens against the window, the trigger and the target, and what the next compaction would do",
  },
  config: {
    positionals: ['conversation'],
    flags: CONFIG_FLAGS,
    summary: "set or show a conversation's compaction settings (window, target, scope...), stored for every process on the store",
    help: CONFIG_HELP,
  },
  resume: {
    positionals: ['conversation'],
    flags: { json: 'switch' },
    summary: "lift the loop guard's pause of a conversation, for every process sharing the store",
  },
  search: {
    positionals: ['query'],
    flags: { conversation: text, depth: int(0), kind, from: text, to: text, limit: int(1), json: 'switch' },
    required: ['conversation'],
    summary: "search a conversation's archive (memory_read)",
    check: checkSearch,
  },
  inspect: {
    positionals: ['conversation'],
    flags: { 'session-gap': int(0), html: text, json: 'switch' },
    summary: 'list archived batches by depth with the sessions each covers, and the live sessions (--html <file>: a timeline page)',
  },
  resummarize: {
    positionals: ['conversation'],
    flags: { depth: int(0), json: 'switch' },
    required: ['depth'],
    summary: 'fold every frontier batch of a depth into one batch of the next depth',
  },
  list: { positionals: [], flags: { json: 'switch' }, summary: "the namespace's conversations: live messages and last update, newest first" },
  export: {
    positionals: ['conversation'],
    flags: { out: text, json: 'switch' },
    summary: 'everything kept of a conversation (live rows, summary batches, verbatim transcripts) as JSON Lines',
    help: ['  --out <file>  write the JSON Lines to this file (created or replaced) instead of stdout'],
  },
  erase: {
    positionals: ['conversation'],
    flags: { yes: 'switch', json: 'switch' },
    summary: 'remove a conversation from both stores, archive files included (needs --yes)',
    help: ['  --yes  erase for real; without it the command says what would be removed and exits 1'],
  },
  migrate: { positionals: [], flags: { json: 'switch' }, summary: 'apply database migrations' },
  reconcile: {
    positionals: [],
    flags: { conversation: text, json: 'switch', 'adopt-archive': 'switch' },
    summary: 'finish or undo compactions a crash interrupted (all conversations, or --conversation)',
    help: [
      "  --adopt-archive  record the configured archive (LANCEDB_URI) as the live store's, replacing the one recorded:",
      '                   only after moving the archive there (a store and an archive that do not belong together are refused)',
    ],
  },
  worker: {
    positionals: [],
    flags: { concurrency: int(1) },
    summary: 'run queued background compactions (PostgreSQL): any number of workers share the queue',
    help: [`  --concurrency <n>  compactions this worker runs at once (default ${JOB_DEFAULTS.workerConcurrency})`],
  },
  mcp: {
    positionals: [],
    flags: { conversation: text, allow: text, http: int(0), host: text, token: text, 'read-only': 'switch', writable: 'switch' },
    summary: 'serve memory_read (and context, compact) to MCP clients over stdio, or Streamable HTTP with --http',
    help: [
      '  --conversation <id>  the one conversation served; or --allow <id,id,...>: calls name one of these',
      '  --http <port>  serve Streamable HTTP at http://HOST:PORT/mcp instead of stdio (0: a free port, printed)',
      '  --host <address>  where --http listens (default 127.0.0.1); any other than loopback needs a token',
      '  --token <secret>  bearer token HTTP clients must send (default $MEMFOLD_MCP_TOKEN), at least 16 characters',
      '  --read-only  open the LanceDB archive alone, not the live store: runs beside an agent that holds the',
      '               embedded store; serves memory_read only',
      '  --writable  also serve compact (the server then writes to the stores)',
    ],
  },
  eval: {
    positionals: ['file'],
    flags: {
      dataset: z.enum(DATASETS, { error: (issue) => `must be one of ${DATASETS.join(', ')} (got ${JSON.stringify(issue.input)})` }),
      questions: text,
      window: int(256),
      windows: text,
      conversations: int(1),
      'session-scope': z.enum(SESSION_SCOPES, { error: (issue) => `must be one of ${SESSION_SCOPES.join(', ')} (got ${JSON.stringify(issue.input)})` }),
      'keep-sessions': int(1),
      'answer-model': text,
      'judge-model': text,
      'answer-window': int(1),
      'answer-base-url': text,
      'judge-base-url': text,
      'answer-api-key-env': text,
      'judge-api-key-env': text,
      out: text,
      json: 'switch',
    },
    required: ['dataset'],
    summary: 'replay a dataset (locomo, longmemeval, jsonl, tau-bench, swe-agent) into a fresh store and score what survives, against baselines',
    help: EVAL_HELP,
  },
};

export interface ParsedCommand {
  command: string;
  positionals: Record<string, string>;
  flags: Record<string, string | number | boolean>;
}

export type ParsedArgs = ParsedCommand | { command: 'help'; topic?: string } | { command: 'version' };

/** The spec of a known command; own keys only, so `constructor` or `__proto__` is unknown too. */
function commandSpec(name: string): CommandSpec {
  const spec = Object.hasOwn(COMMANDS, name) ? COMMANDS[name] : undefined;
  if (!spec) throw new InvalidArgumentError('command', `unknown command "${name}" (commands: ${Object.keys(COMMANDS).join(', ')})`);
  return spec;
}

export function parseArgs(argv: readonly string[]): ParsedArgs {
  const [command, ...rest] = argv;
  if (command === undefined || command === 'help' || command === '--help' || command === '-h') {
    const topic = rest[0];
    // `help help` and `help version` are not commands of their own: the general help answers them.
    if (topic === undefined || topic === 'help' || topic === 'version') return { command: 'help' };
    commandSpec(topic);
    return { command: 'help', topic };
  }
  if (command === '--version' || command === '-v' || command === 'version') return { command: 'version' };
  const spec = commandSpec(command);
  const flagTypes = { ...COMMON, ...spec.flags };
  const positionals: string[] = [];
  const flags: Record<string, string | number | boolean> = {};
  for (let i = 0; i < rest.length; i++) {
    const arg = rest[i]!;
    if (arg === '--') {
      positionals.push(...rest.slice(i + 1));
      break;
    }
    if (!arg.startsWith('--')) {
      positionals.push(arg);
      continue;
    }
    const eq = arg.indexOf('=');
    const name = eq >= 0 ? arg.slice(2, eq) : arg.slice(2);
    const type = flagTypes[name];
    if (!type)
      throw new InvalidArgumentError(
        `--${name}`,
        `is not an option of "${command}" (options: ${Object.keys(flagTypes)
          .map((f) => `--${f}`)
          .join(', ')})`,
      );
    if (type === 'switch') {
      if (eq >= 0) throw new InvalidArgumentError(`--${name}`, 'takes no value');
      flags[name] = true;
      continue;
    }
    const raw = eq >= 0 ? arg.slice(eq + 1) : rest[++i];
    if (raw === undefined) throw new InvalidArgumentError(`--${name}`, 'needs a value');
    flags[name] = parseWithSchema(type, raw, { prefix: `--${name}` });
  }
  if (flags.help) return { command: 'help', topic: command };
  if (positionals.length > spec.positionals.length)
    throw new InvalidArgumentError(positionals[spec.positionals.length]!, `unexpected argument to "${command}"`);
  const named: Record<string, string> = {};
  spec.positionals.forEach((name, k) => {
    const value = positionals[k];
    if (value === undefined || value === '')
      throw new InvalidArgumentError(`<${name}>`, `is required: memfold ${command} ${spec.positionals.map((p) => `<${p}>`).join(' ')}`);
    named[name] = value;
  });
  for (const name of spec.required ?? []) {
    if (flags[name] === undefined) throw new InvalidArgumentError(`--${name}`, `is required by "${command}"`);
  }
  spec.check?.(named, flags);
  return { command, positionals: named, flags };
}

/** How help names a flag's value: `n` for a number, the choices of an enum, else `value`. */
function flagValueName(schema: z.ZodType<string | number>): string {
  if (schema instanceof z.ZodEnum) return (schema.options as string[]).join('|');
  return schema instanceof z.ZodPipe ? 'n' : 'value';
}

export function usage(topic?: string): string {
  const spec = topic && Object.hasOwn(COMMANDS, topic) ? COMMANDS[topic] : undefined;
  if (topic && spec) {
    const flags = Object.entries(spec.flags).map(
      ([f, t]) => `  --${f}${t === 'switch' ? '' : ` <${flagValueName(t)}>`}${spec.required?.includes(f) ? ' (required)' : ''}`,
    );
    return [
      `memfold ${topic} ${spec.positionals.map((p) => `<${p}>`).join(' ')}`.trimEnd(),
      `  ${spec.summary}`,
      ...flags,
      ...COMMON_HELP,
      ...(spec.help ?? []),
    ].join('\n');
  }
  const width = Math.max(...Object.keys(COMMANDS).map((c) => c.length));
  return [
    'memfold: conversation-memory compactor',
    '',
    'usage: memfold <command> [arguments] [--home <dir>] [--namespace <name>] [--json]',
    '',
    ...Object.entries(COMMANDS).map(([name, s]) => `  ${name.padEnd(width)}  ${s.summary}`),
    '',
    'memfold help <command> shows its options. Configuration comes from the environment (see README).',
  ].join('\n');
}
