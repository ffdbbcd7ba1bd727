/**
 * Every error class of memfold is a MemfoldError, and `X.isInstance(value)` tells its own errors (and its
 * subclasses') apart from the others, also for errors made by another copy of the package, where `instanceof` fails.
 */
import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { CompactionJobFailed } from '../src/background/compaction-worker.js';
import { ReadbackError } from '../src/compaction/batches/archive-writer.js';
import { StageError } from '../src/compaction/stage-error.js';
import { InvalidArgumentError, InvalidConfigError, MemfoldError } from '../src/errors.js';
import { ScopeRefusal } from '../src/mcp/mcp-scope.js';
import { ConnectionLostError } from '../src/persistence/persistence-error.js';

const outcome = {
  conversationId: 'c',
  jobId: 'j',
  status: 'failed' as const,
  failureCode: 'archive_failed' as const,
  tokensBefore: 1,
  tokensAfter: 1,
  attempt: 0,
  fallbacks: 0,
  modelCalls: 0,
};
const samples = [
  new MemfoldError('busy', 'held'),
  new InvalidArgumentError('limit', 'must be positive'),
  new InvalidConfigError('contextWindow', 'must be positive'),
  new ReadbackError('d0-x', 'content differs'),
  new StageError('commit_failed', new Error('down')),
  new ConnectionLostError(Object.assign(new Error('terminating connection'), { code: '57P01' })),
  new ScopeRefusal('Refused'),
  new CompactionJobFailed(outcome),
];
const classes = [MemfoldError, InvalidArgumentError, InvalidConfigError, ReadbackError, StageError, ConnectionLostError, ScopeRefusal, CompactionJobFailed];

describe('error classes', () => {
  it('are all MemfoldErrors, each with a kind of its own', () => {
    for (const error of samples) expect(MemfoldError.isInstance(error), error.name).toBe(true);
    for (const cls of classes) expect(Object.hasOwn(cls, 'kind'), cls.name).toBe(true);
    expect(new Set(classes.map((cls) => cls.kind)).size).toBe(classes.length);
  });

  it('isInstance answers for the class and its subclasses only', () => {
    for (const [i, cls] of classes.entries()) {
      const matched = samples.filter((error) => cls.isInstance(error)).map((error) => error.name);
      expect(matched, cls.name).toEqual(cls === MemfoldError ? samples.map((error) => error.name) : [samples[i]!.name]);
    }
    for (const value of [undefined, null, 'InvalidArgumentError', new Error('plain'), { code: 'busy' }]) expect(MemfoldError.isInstance(value)).toBe(false);
  });

  it('isInstance works for errors of another copy of the package, where instanceof does not', async () => {
    // The module loaded a second time (another URL): what a duplicate copy of the package in node_modules is.
    const another = '../src/errors.js?another-copy';
    const copy = (await import(another)) as typeof import('../src/errors.js');
    const theirs = new copy.InvalidArgumentError('limit', 'must be positive');
    expect(theirs instanceof InvalidArgumentError).toBe(false);
    expect(InvalidArgumentError.isInstance(theirs)).toBe(true);
    expect(MemfoldError.isInstance(theirs)).toBe(true);
    expect(InvalidConfigError.isInstance(theirs)).toBe(false);
    expect(copy.InvalidArgumentError.isInstance(samples[1])).toBe(true);
  });

  it('keep what callers read: a lost connection is a retryable persistence error naming its SQLSTATE', () => {
    const lost = samples[5] as ConnectionLostError;
    expect({ code: lost.code, retryable: lost.retryable, sqlCode: lost.sqlCode, details: lost.details }).toEqual({
      code: 'persistence_error',
      retryable: true,
      sqlCode: '57P01',
      details: { code: '57P01', reason: 'connection_lost' },
    });
    expect((samples[4] as StageError).failureCode).toBe('commit_failed');
  });

  it('are told apart with isInstance in src/, never instanceof (which fails across package copies)', () => {
    const src = path.resolve(import.meta.dirname, '../src');
    const names = classes.map((cls) => cls.name).join('|');
    const found = readdirSync(src, { recursive: true, encoding: 'utf8' })
      .filter((file) => file.endsWith('.ts'))
      .flatMap((file) =>
        readFileSync(path.join(src, file), 'utf8')
          .split('\n')
          .filter((line) => new RegExp(`instanceof (${names})\\b`).test(line))
          .map((line) => `${file}: ${line.trim()}`),
      );
    expect(found).toEqual([]);
  });
});
