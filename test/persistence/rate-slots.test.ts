/**
 * Start slots of a shared rate limit (`reserveRateSlot`, migration 010) on the database backends: each reservation of a
 * key is one interval after the previous one, by the database's clock; concurrent reservations never share a slot;
 * keys are separate limits; a slot in the past is not waited for; bad arguments refused. The in-memory store has none.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { InvalidArgumentError } from '../../src/errors.js';
import type { PersistenceProvider } from '../../src/persistence/persistence-provider.js';
import { openMemory, persistenceBackends } from '../support/backends.js';

const MINUTE = 60_000;

for (const backend of persistenceBackends()) {
  describe(`${backend.name}: rate-limit slots`, () => {
    let store: PersistenceProvider;
    let cleanup: () => Promise<void>;
    beforeAll(async () => {
      ({ persistence: store, cleanup } = await backend.open());
    });
    afterAll(() => cleanup());

    const reserve = (key: string, intervalMs: number) => store.reserveRateSlot!(key, intervalMs);

    it('spaces the reservations of a key one interval apart, the first at once', async () => {
      // A minute's interval: the few ms the statements take are small beside it.
      const waits = [];
      for (let i = 0; i < 3; i++) waits.push(await reserve('spaced', MINUTE));
      expect(waits[0]).toBe(0);
      expect(waits[1]).toBeGreaterThan(MINUTE - 2_000);
      expect(waits[1]).toBeLessThanOrEqual(MINUTE);
      expect(waits[2]! - waits[1]!).toBeGreaterThan(MINUTE - 2_000);
      expect(waits[2]! - waits[1]!).toBeLessThanOrEqual(MINUTE);
    });

    it('gives concurrent reservations distinct slots, one interval apart', async () => {
      const waits = await Promise.all(Array.from({ length: 12 }, () => reserve('concurrent', MINUTE)));
      const slots = waits.map((wait) => Math.round(wait / MINUTE)).sort((a, b) => a - b);
      expect(slots).toEqual(Array.from({ length: 12 }, (_, i) => i));
    });

    it('keeps each key its own limit', async () => {
      await reserve('key-a', MINUTE);
      expect(await reserve('key-b', MINUTE)).toBe(0);
      expect(await reserve('key-a', MINUTE)).toBeGreaterThan(MINUTE - 2_000);
    });

    it('does not make a caller wait for a slot that has passed', async () => {
      expect(await reserve('short', 200)).toBe(0);
      await new Promise((resolve) => setTimeout(resolve, 300));
      expect(await reserve('short', 200)).toBe(0);
      // The next one follows that start, not the old one.
      const next = await reserve('short', 200);
      expect(next).toBeGreaterThan(0);
      expect(next).toBeLessThanOrEqual(200);
    });

    it('refuses an empty key and an interval that is not a positive number', async () => {
      await expect(reserve('', 10)).rejects.toMatchObject({ field: 'key' });
      for (const bad of [0, -5, Number.NaN, Number.POSITIVE_INFINITY]) {
        await expect(reserve('bad', bad)).rejects.toBeInstanceOf(InvalidArgumentError);
      }
    });
  });
}

describe('memory: rate-limit slots', () => {
  it('has no reserveRateSlot: one process, nothing to share', async () => {
    const { persistence, cleanup } = await openMemory();
    expect(persistence.reserveRateSlot).toBeUndefined();
    await cleanup();
  });
});
