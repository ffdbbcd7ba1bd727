/**
 * The memory_read arguments, pure: one zod schema validates them, gives their type and, through
 * `memoryReadParameters`, the JSON schema of the tool definition, so the three cannot drift.
 * Errors name the argument and the rule.
 */
import type { z } from 'zod';
import { toIsoTime } from '../conversation/iso-time.js';
import { parseWithSchema } from '../conversation/schema-issues.js';
import { argumentText, type PresentArgs, toolArgumentsObject, toolParameters } from './tool-arguments.js';
import { onDemand, zod } from '../zod-on-demand.js';

export const MEMORY_READ_DEFAULT_LIMIT = 5;
export const MEMORY_READ_MAX_LIMIT = 20;
/** A query longer than a few paragraphs is not a search; the cap also bounds the embedder's input. */
export const MEMORY_READ_MAX_QUERY_CHARS = 2_000;
/** Labels are short (`d0-…`, `t-…`), but labels of the earlier form held the conversation id, which may take 1 KiB. */
export const MEMORY_READ_MAX_LABEL_CHARS = 2_000;
/**
 * One token budget for a whole search answer, filled best first. 3,000 tokens holds about 25 windows of three
 * short messages: on LoCoMo, enough for the evidence of most questions (docs/memory-read.md, ablation).
 */
export const MEMORY_READ_DEFAULT_TOKENS = 3_000;
/** A model may ask for less or more within these limits: below 200 not even one window fits; above 12,000 the answer crowds the window. */
export const MEMORY_READ_MIN_TOKENS = 200;
export const MEMORY_READ_MAX_TOKENS = 12_000;
/** Pages of one search a call may ask for: each holds a budget of passages, best first. */
export const MEMORY_READ_MAX_PAGE = 20;
/** The depth filter's ceiling: far above any depth a conversation reaches (each depth folds several batches). */
const MEMORY_READ_MAX_DEPTH = 1000;

/** An ISO date or time, as a canonical UTC string (`parseIsoTime`, the one date rule). */
function argumentTime(description: string) {
  return argumentText(40).transform(toIsoTime).describe(description);
}

function argumentInt(min: number, max: number) {
  const rule = `must be an integer from ${min} to ${max}`;
  return zod().number({ error: rule }).int(rule).min(min, rule).max(max, rule);
}

const KNOWN = ['query', 'label', 'depth', 'kind', 'from', 'to', 'limit', 'max_tokens', 'page'];

/** The arguments as a model sends them (snake_case), with their descriptions for the tool definition. */
function memoryReadArgsObject() {
  const z = zod();
  return z.strictObject(
    {
      query: argumentText(MEMORY_READ_MAX_QUERY_CHARS).describe('Words to search for.').optional(),
      label: argumentText(MEMORY_READ_MAX_LABEL_CHARS).describe('Read one batch by its label (as shown in the context summary or a search hit).').optional(),
      depth: argumentInt(0, MEMORY_READ_MAX_DEPTH)
        .describe('Only summaries of this depth (0 summarizes messages; higher depths summarize batches).')
        .optional(),
      kind: z
        .enum(['summary', 'transcript'], { error: 'must be "summary" or "transcript"' })
        .describe('Only summaries, or only verbatim transcript segments.')
        .optional(),
      from: argumentTime('ISO date/time: only archive entries that end at or after it.').optional(),
      to: argumentTime('ISO date/time: only archive entries that start at or before it.').optional(),
      limit: argumentInt(1, MEMORY_READ_MAX_LIMIT)
        .default(MEMORY_READ_DEFAULT_LIMIT)
        .describe('At most this many summaries listed (messages are bounded by max_tokens).'),
      // No parse default: an absent max_tokens means the tool's configured budget (memoryReadTokens).
      max_tokens: argumentInt(MEMORY_READ_MIN_TOKENS, MEMORY_READ_MAX_TOKENS)
        .meta({ default: MEMORY_READ_DEFAULT_TOKENS })
        .describe('Tokens the search answer may take; what does not fit is named at the end.')
        .optional(),
      page: argumentInt(1, MEMORY_READ_MAX_PAGE)
        .describe('A second look: page 2 shows the best matching messages the first answer left out, page 3 the next, and so on.')
        .optional(),
    },
    { error: (issue) => (issue.code === 'unrecognized_keys' ? `is not an argument of memory_read (known: ${KNOWN.join(', ')})` : undefined) },
  );
}

type GivenArgs = z.output<ReturnType<typeof memoryReadArgsObject>>;

/**
 * Parsed memory_read arguments, derived from the schema: its fields as parsed, `max_tokens` under its camelCase name
 * `maxTokens` (absent: the tool's configured budget).
 */
export type MemoryReadArgs = PresentArgs<Omit<GivenArgs, 'max_tokens'> & { maxTokens?: GivenArgs['max_tokens'] }>;

const memoryReadArgsSchema = onDemand(() =>
  memoryReadArgsObject()
    .check((ctx) => {
      const { query, label, from, to } = ctx.value;
      if (query === undefined && label === undefined)
        ctx.issues.push({ code: 'custom', path: ['query'], message: 'give a query to search, or a label to read', input: ctx.value });
      if (ctx.value.page !== undefined && query === undefined)
        ctx.issues.push({ code: 'custom', path: ['page'], message: 'pages a search: give a query with it', input: ctx.value });
      if (query !== undefined && label !== undefined)
        ctx.issues.push({ code: 'custom', path: ['label'], message: 'give either query or label, not both', input: ctx.value });
      if (from !== undefined && to !== undefined && from > to)
        ctx.issues.push({ code: 'custom', path: ['from'], message: 'must not be after to', input: ctx.value });
    })
    .transform(({ max_tokens, ...given }): MemoryReadArgs => {
      // Absent arguments stay absent (no `key: undefined`), and max_tokens takes its camelCase name.
      const args = Object.fromEntries(Object.entries(given).filter(([, value]) => value !== undefined)) as Omit<MemoryReadArgs, 'maxTokens'>;
      return max_tokens === undefined ? args : { ...args, maxTokens: max_tokens };
    }),
);

/** The JSON schema of the arguments (the tool definition's `parameters`), from the same schema that parses them. */
export function memoryReadParameters(): Record<string, unknown> {
  return toolParameters(memoryReadArgsSchema());
}

/** Accepts the parsed arguments object or the JSON string a model sends; JSON's null for an argument means absent. */
export function parseMemoryReadArgs(input: unknown): MemoryReadArgs {
  return parseWithSchema(memoryReadArgsSchema(), toolArgumentsObject(input));
}
