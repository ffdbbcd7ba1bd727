/**
 * Settings objects built from JSON (`JSON.parse` makes `__proto__` an own key) are refused key by key like any
 * unknown setting: an InvalidConfigError naming `compaction.__proto__`, never a TypeError, and nothing changes.
 * Names every object inherits (`constructor`, `toString`) are not settings either.
 */
import { expect, it } from 'vitest';
import { resolveRuntimeConfig } from '../../src/config.js';
import { InvalidConfigError } from '../../src/errors.js';
import { createMemfold } from '../../src/memfold.js';

const INHERITED = ['__proto__', 'constructor', 'toString', 'hasOwnProperty'];

it('configure refuses an own __proto__ (and every inherited name), naming it, and keeps the settings', async () => {
  const memfold = await createMemfold({ store: 'memory', env: {}, compaction: { contextWindow: 8_000 } });
  try {
    for (const key of INHERITED) {
      const change = JSON.parse(`{"${key}": {"contextWindow": 4000}, "contextWindow": 16000}`);
      let thrown: unknown;
      try {
        memfold.configure(change);
      } catch (error) {
        thrown = error;
      }
      expect(thrown, key).toBeInstanceOf(InvalidConfigError);
      expect(thrown, key).toMatchObject({ field: `compaction.${key}`, message: `Invalid config field compaction.${key}: unknown setting` });
      expect(() => memfold.configure(change, { conversationId: 'c' }), key).toThrow(`compaction.${key}`);
    }
    expect(memfold.compactor.settingsOf('c').contextWindow).toBe(8_000);
    expect(memfold.configure({ contextWindow: 16_000 }).contextWindow).toBe(16_000);
  } finally {
    await memfold.close();
  }
});

it('createMemfold refuses such keys in compaction and config settings too', async () => {
  await expect(createMemfold({ store: 'memory', env: {}, compaction: JSON.parse('{"__proto__": {"trigger": 1}}') })).rejects.toMatchObject({
    field: 'compaction.__proto__',
  });
  expect(() => resolveRuntimeConfig(JSON.parse('{"__proto__": {"home": "/elsewhere"}}'), {})).toThrow('config.__proto__');
});
