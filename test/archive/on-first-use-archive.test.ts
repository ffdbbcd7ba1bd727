/**
 * `openOnFirstUse` opens its archive on the first call alone, once for calls at once; a failed opening fails that
 * call and is tried again by the next; `close()` waits for an opening in progress and closes what it opened.
 */
import { describe, expect, it } from 'vitest';
import type { Archive } from '../../src/archive/archive.js';
import { createInMemoryArchive } from '../../src/archive/in-memory/in-memory-archive.js';
import { openOnFirstUse } from '../../src/archive/on-first-use-archive.js';
import { MemfoldError } from '../../src/errors.js';

/** An in-memory archive whose closing is seen. */
function tracked(): { archive: Archive; closed: () => boolean } {
  const inner = createInMemoryArchive();
  let closed = false;
  return {
    archive: { ...inner, close: async () => void (closed = true) },
    closed: () => closed,
  };
}

describe('openOnFirstUse', () => {
  it('opens on the first call only, once for calls at once', async () => {
    const { archive } = tracked();
    let opens = 0;
    const lazy = openOnFirstUse(async () => {
      opens += 1;
      return archive;
    });
    expect(opens).toBe(0);
    await Promise.all([lazy.list({ conversationId: 'c' }), lazy.search({ conversationId: 'c', query: 'x' })]);
    expect(opens).toBe(1);
    await lazy.close();
  });

  it('fails the call whose opening fails, and opens again on the next', async () => {
    const { archive } = tracked();
    let refuse = true;
    const lazy = openOnFirstUse(async () => {
      if (refuse) throw new MemfoldError('archive_mismatch', 'another archive');
      return archive;
    });
    await expect(lazy.read('c', ['a'])).rejects.toMatchObject({ code: 'archive_mismatch' });
    refuse = false;
    expect(await lazy.read('c', ['a'])).toEqual([]);
    await lazy.close();
  });

  it('close() waits for an opening in progress and closes what it opened; later calls are refused', async () => {
    const { archive, closed } = tracked();
    let release!: () => void;
    const gate = new Promise<void>((resolve) => {
      release = resolve;
    });
    const lazy = openOnFirstUse(async () => {
      await gate;
      return archive;
    });
    const reading = lazy.list({ conversationId: 'c' });
    const closing = lazy.close();
    release();
    await closing;
    expect(closed()).toBe(true);
    await reading;
    await expect(lazy.list({ conversationId: 'c' })).rejects.toMatchObject({ code: 'archive_error' });
  });

  it('a close before any call opens nothing', async () => {
    let opens = 0;
    const lazy = openOnFirstUse(async () => {
      opens += 1;
      return createInMemoryArchive();
    });
    await lazy.close();
    expect(opens).toBe(0);
  });
});
