/**
 * Argument parsing for the `memfold` command, pure: argv in, a parsed command or an error naming
 * the argument out.
 */
import { InvalidArgumentError } from '../errors.js';
import { EVAL_HELP } from './commands/eval-help.js';

type FlagType = 'string' | 'int' | 'boolean';

interface CommandSpec {
  positionals: string[];
  flags: Record<string, FlagType>;
  required?: string[];
  summary: string;
  /** Lines `memfold help <command>` adds after the options. */
  help?: readonly string[];
}

/** Options every command takes: where the stores live and which namespace of conversations to use. */
const COMMON: Record<string, FlagType> = { home: 'string', namespace: 'string', help: 'boolean' };
const COMMON_HELP = [
  '  --home <dir>  embedded store folder (default $MEMFOLD_HOME or ./.memfold)',
  '  --namespace <name>  scope of conversations: the command sees no other (default $MEMFOLD_NAMESPACE or default)',
];

export const COMMANDS: Record<string, CommandSpec> = {
  demo: {
    positionals: [],
    flags: { turns: 'int', window: 'int', json: 'boolean' },
    summary: 'replay a generated multi-session conversation with a small window, offline',
  },
  import: { positionals: ['file'], flags: { conversation: 'string', json: 'boolean' }, summary: 'append messages from a JSONL file (one message a line)' },
  compact: { positionals: ['conversation'], flags: { force: 'boolean', window: 'int', json: 'boolean' }, summary: 'compact a stored conversation now' },
  context: { positionals: ['conversation'], flags: { json: 'boolean' }, summary: 'print what the model would see' },
  usage: {
    positionals: ['conversation'],
    flags: { window: 'int', json: 'boolean' },
    summary: "the context's tokens against the window, the trigger and the target, and what the next compaction would do",
  },
  resume: {
    positionals: ['conversation'],
    flags: { json: 'boolean' },
    summary: "lift the loop guard's pause of a conversation, for every process sharing the store",
  },
  search: {
    positionals: ['query'],
    flags: { conversation: 'string', depth: 'int', kind: 'string', from: 'string', to: 'string', limit: 'int', json: 'boolean' },
    required: ['conversation'],
    summary: "search a conversation's archive (memory_read)",
  },
  inspect: { positionals: ['conversation'], flags: { json: 'boolean' }, summary: 'list archived batches by depth' },
  resummarize: {
    positionals: ['conversation'],
    flags: { depth: 'int', json: 'boolean' },
    required: ['depth'],
    summary: 'fold every frontier batch of a depth into one batch of the next depth',
  },
  migrate: { positionals: [], flags: { json: 'boolean' }, summary: 'apply database migrations' },
  reconcile: {
    positionals: [],
    flags: { conversation: 'string', json: 'boolean' },
    summary: 'finish or undo compactions a crash interrupted (all conversations, or --conversation)',
  },
  eval: {
    positionals: ['file'],
    flags: { dataset: 'string', questions: 'string', window: 'int', windows: 'string', conversations: 'int', out: 'string', json: 'boolean' },
    required: ['dataset'],
    summary: 'replay a dataset (locomo, jsonl, tau-bench) into a fresh store and score what survives, against baselines',
    help: EVAL_HELP,
  },
};

export interface ParsedCommand {
  command: string;
  positionals: Record<string, string>;
  flags: Record<string, string | number | boolean>;
}

export type ParsedArgs = ParsedCommand | { command: 'help'; topic?: string } | { command: 'version' };

function convert(name: string, type: FlagType, raw: string): string | number {
  if (type === 'string') return raw;
  const value = Number(raw);
  if (!Number.isInteger(value)) throw new InvalidArgumentError(`--${name}`, `must be an integer (got "${raw}")`);
  return value;
}

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
    if (type === 'boolean') {
      if (eq >= 0) throw new InvalidArgumentError(`--${name}`, 'takes no value');
      flags[name] = true;
      continue;
    }
    const raw = eq >= 0 ? arg.slice(eq + 1) : rest[++i];
    if (raw === undefined) throw new InvalidArgumentError(`--${name}`, 'needs a value');
    flags[name] = convert(name, type, raw);
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
  return { command, positionals: named, flags };
}

export function usage(topic?: string): string {
  const spec = topic && Object.hasOwn(COMMANDS, topic) ? COMMANDS[topic] : undefined;
  if (topic && spec) {
    const flags = Object.entries(spec.flags).map(
      ([f, t]) => `  --${f}${t === 'boolean' ? '' : ` <${t === 'int' ? 'n' : 'value'}>`}${spec.required?.includes(f) ? ' (required)' : ''}`,
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
