/**
 * memory_read reads the relative dates of the messages it shows against when they were said, in a note after the
 * message's text ("last week" said on 16 June 2023 is the week before 16 June 2023), leaving the text verbatim.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { ConversationMessage } from '../../src/conversation/types.js';
import { createHashingEmbedder } from '../../src/embedding/hashing-embedder.js';
import { openLanceArchive } from '../../src/archive/lancedb/lancedb-archive.js';
import type { Archive } from '../../src/archive/archive.js';
import { createMemoryReadTool } from '../../src/tools/memory-read.js';
import { tempFolder, transcript } from '../archive/archive-fixtures.js';

const said = (seq: number, content: string, createdAt: string): ConversationMessage => ({
  id: `conv-m${seq}`,
  conversationId: 'conv',
  seq,
  role: seq % 2 === 1 ? 'user' : 'assistant',
  content,
  createdAt,
});

// 16 June 2023 is a Friday, 15 July 2023 a Saturday.
const GYM = 'I finally joined the climbing gym last week, the one down by the river.';
const POTTERY = 'We went to a pottery workshop last Friday and made two bowls.';
const BREAD = 'Today I baked sourdough bread for the first time.';

describe('memory_read date notes', () => {
  let folder: Awaited<ReturnType<typeof tempFolder>>;
  let archive: Archive;

  beforeAll(async () => {
    folder = await tempFolder('memory-read-date-notes');
    archive = await openLanceArchive({ uri: folder.dir, embedder: createHashingEmbedder() });
    const messages = [
      said(1, GYM, '2023-06-16T10:00:00.000Z'),
      said(2, 'Nice, climbing is a great workout.', '2023-06-16T10:01:00.000Z'),
      said(3, POTTERY, '2023-07-15T09:00:00.000Z'),
      said(4, 'Pottery sounds relaxing.', '2023-07-15T09:01:00.000Z'),
      said(5, BREAD, '2023-07-20T18:00:00.000Z'),
      said(6, 'How did the sourdough turn out?', '2023-07-20T18:01:00.000Z'),
    ];
    await archive.write([transcript('conv', 'segment-0', messages)]);
  });
  afterAll(async () => {
    await archive.close();
    await folder.cleanup();
  });

  it('says when "last week" was, after the message, which stays verbatim', async () => {
    const { output } = await createMemoryReadTool(archive, 'conv').execute({ query: 'When did I join the climbing gym?' });
    expect(output).toContain(`${GYM} [dates: last week = the week before 16 June 2023]`);
  });

  it('gives a past weekday its date and the day it was said', async () => {
    const { output } = await createMemoryReadTool(archive, 'conv').execute({ query: 'When was the pottery workshop?' });
    expect(output).toContain(`${POTTERY} [dates: last Friday = Friday 14 July 2023, the Friday before 15 July 2023]`);
  });

  it('adds nothing for the day the line already gives, nor with the notes turned off', async () => {
    const { output } = await createMemoryReadTool(archive, 'conv').execute({ query: 'sourdough bread' });
    const line = output.split('\n').find((l) => l.includes(BREAD));
    expect(line?.endsWith(BREAD)).toBe(true);
    const plain = await createMemoryReadTool(archive, 'conv', { strategy: { dateNotes: 'none' } }).execute({ query: 'climbing gym' });
    expect(plain.output).toContain(GYM);
    expect(plain.output).not.toContain('[dates:');
  });
});
