/**
 * `createMemfold`'s options have one schema: a bad value of every kind is refused naming the option (before anything
 * opens), the defaults come from `DEFAULT_MEMFOLD_OPTIONS` alone, and `MemfoldOptions` is the schema's type.
 */
import { describe, expect, expectTypeOf, it } from 'vitest';
import type { z } from 'zod';
import { InvalidConfigError } from '../src/errors.js';
import { createMemfold } from '../src/memfold.js';
import { checkOptions, DEFAULT_MEMFOLD_OPTIONS, type MemfoldOptions, type memfoldOptionsSchema, resolveMemfoldOptions } from '../src/memfold-options.js';
import { createExtractiveSummarizer } from '../src/summarizer/extractive/extractive-summarizer.js';

function refusal(options: unknown): InvalidConfigError {
  try {
    checkOptions(options as MemfoldOptions);
  } catch (error) {
    if (error instanceof InvalidConfigError) return error;
    throw error;
  }
  throw new Error(`accepted ${JSON.stringify(options)}`);
}

const summarizer = createExtractiveSummarizer();

describe('createMemfold options schema', () => {
  it.each([
    ['a flag that is not a boolean', { migrate: 'yes' }, 'migrate', 'must be a boolean'],
    ['another flag', { reconcileOnOpen: 1 }, 'reconcileOnOpen', 'must be a boolean'],
    ['a blank prompt', { prompt: '  ' }, 'prompt', 'must be a non-empty string'],
    ['an unknown prompt mode', { promptMode: 'rolling' }, 'promptMode', `must be 'structured' or 'update' (got "rolling")`],
    ['a callback that is not a function', { onEvent: 'log' }, 'onEvent', 'must be a function'],
    ['hooks that are not an object', { hooks: 3 }, 'hooks', 'must be an object'],
    ['an unknown hook', { hooks: { onCompact: () => undefined } }, 'hooks.onCompact', 'unknown hook (beforeCompact, afterCompact)'],
    ['a hook that is not a function', { hooks: { afterCompact: true } }, 'hooks.afterCompact', 'must be a function'],
    ['a read budget out of range', { memoryReadTokens: 100 }, 'memoryReadTokens', 'must be an integer from 200 to 12000 (got 100)'],
    ['a read budget that is not an integer', { memoryReadTokens: 300.5 }, 'memoryReadTokens', 'must be an integer from 200 to 12000 (got 300.5)'],
    ['an unknown store', { store: 'disk' }, 'store', "must be 'configured' or 'memory'"],
    ['an adapter that is not an object', { summarizer: 'extractive' }, 'summarizer', 'must be an object'],
    ['a bad compaction setting', { compaction: { keepSessions: 0 } }, 'compaction.keepSessions', 'must be an integer >= 1 (got 0)'],
    ['a prompt with a summarizer', { prompt: 'Summarize.', summarizer }, 'prompt', 'applies to the summarizer memfold builds'],
    ['a prompt mode with a summarizer', { promptMode: 'update', summarizer }, 'promptMode', 'applies to the summarizer memfold builds'],
    ['adoptArchive without migrations', { adoptArchive: true, migrate: false }, 'adoptArchive', 'writes the live store: not with migrate: false'],
    ['not an object', 'memory', 'options', 'must be an object'],
  ])('refuses %s naming the option', (_kind, options, field, rule) => {
    const error = refusal(options);
    expect(error.field).toBe(field);
    expect(error.message).toContain(`Invalid config field ${field}: ${rule}`);
  });

  it('refuses before anything opens, through createMemfold', async () => {
    await expect(createMemfold({ store: 'memory', env: {}, hooks: { onCompact: () => undefined } as never })).rejects.toMatchObject({
      code: 'invalid_config',
      field: 'hooks.onCompact',
    });
  });

  it('fills the defaults from DEFAULT_MEMFOLD_OPTIONS alone, and keeps what is given', () => {
    expect(resolveMemfoldOptions({})).toEqual(DEFAULT_MEMFOLD_OPTIONS);
    expect(DEFAULT_MEMFOLD_OPTIONS).toEqual({ reconcileOnOpen: true, migrate: true, adoptArchive: false, store: 'configured', memoryReadTokens: 3_000 });
    const given = resolveMemfoldOptions({ store: 'memory', migrate: false, memoryReadTokens: undefined, summarizer });
    expect(given).toMatchObject({ store: 'memory', migrate: false, memoryReadTokens: 3_000, reconcileOnOpen: true });
    expect(given.summarizer).toBe(summarizer);
  });

  it('types MemfoldOptions as the schema input', () => {
    expectTypeOf<MemfoldOptions>().toEqualTypeOf<z.input<typeof memfoldOptionsSchema>>();
    expectTypeOf<MemfoldOptions['store']>().toEqualTypeOf<'configured' | 'memory' | undefined>();
    expectTypeOf<MemfoldOptions['memoryReadTokens']>().toEqualTypeOf<number | undefined>();
  });
});
