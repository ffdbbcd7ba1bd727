/**
 * A zone-less date-time is local time; one that the local clocks skip (inside a daylight-saving gap) never happened,
 * and is refused naming the field, where Date would move it an hour on. The process runs in Europe/Berlin here,
 * whose clocks jumped from 02:00 to 03:00 on 2023-03-26.
 */
import { afterAll, beforeAll, expect, it } from 'vitest';
import { parseIsoTime } from '../../src/conversation/iso-time.js';
import { InvalidArgumentError } from '../../src/errors.js';
import { createMemfold } from '../../src/memfold.js';

const savedTz = process.env.TZ;
beforeAll(() => {
  process.env.TZ = 'Europe/Berlin';
});
afterAll(() => {
  if (savedTz === undefined) delete process.env.TZ;
  else process.env.TZ = savedTz;
});

it('refuses a local time inside the gap, naming the field', () => {
  expect(new Date('2023-03-26T02:30:00').getHours()).toBe(3); // the shift this guards against
  for (const text of ['2023-03-26T02:30', '2023-03-26 02:00:00', '2023-03-26T02:59:59.999']) {
    expect(() => parseIsoTime(text, 'createdAt'), text).toThrow(/^Invalid argument createdAt: must be a local time that exists/);
  }
});

it('reads the times around the gap, an overlap hour, and the same time with an offset as before', () => {
  expect(parseIsoTime('2023-03-26T01:59:59', 'at')).toBe('2023-03-26T00:59:59.000Z');
  expect(parseIsoTime('2023-03-26T03:00', 'at')).toBe('2023-03-26T01:00:00.000Z');
  expect(parseIsoTime('2023-10-29T02:30', 'at')).toBe('2023-10-29T00:30:00.000Z');
  expect(parseIsoTime('2023-03-26T02:30Z', 'at')).toBe('2023-03-26T02:30:00.000Z');
  expect(parseIsoTime('2023-03-26T02:30+01:00', 'at')).toBe('2023-03-26T01:30:00.000Z');
  expect(parseIsoTime('2023-03-26', 'at')).toBe('2023-03-26T00:00:00.000Z');
});

it('append refuses such a createdAt naming the message field, and stores nothing', async () => {
  const memfold = await createMemfold({ store: 'memory', env: {} });
  try {
    const appending = memfold.append('c', [
      { role: 'user', content: 'before the gap', createdAt: '2023-03-26T01:30:00' },
      { role: 'assistant', content: 'in the gap', createdAt: '2023-03-26T02:30:00' },
    ]);
    await expect(appending).rejects.toBeInstanceOf(InvalidArgumentError);
    await expect(appending).rejects.toMatchObject({ field: 'messages[1].createdAt' });
    expect(await memfold.history('c')).toEqual([]);
  } finally {
    await memfold.close();
  }
});
