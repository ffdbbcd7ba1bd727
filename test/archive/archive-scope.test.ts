/**
 * Scope: every query and mutation of an archive stays inside one namespace and one conversation,
 * whatever the namespace, conversation ids, labels or parent labels contain. Runs on every archive backend.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Archive } from '../../src/archive/archive.js';
import { archiveBackends, type ArchiveTable } from '../support/archives.js';
import { message, minute, summary, transcript } from './archive-fixtures.js';

const HOSTILE = [
  "' OR '1'='1",
  "x' OR 1=1 --",
  "back\\' OR '1'='1",
  '\\',
  '%',
  '_',
  '*',
  'ab%',
  'ab_',
  'ab*',
  'line\nbreak',
  'nul\u0000byte',
  '"double"',
  '` OR 1=1',
  ') OR (1=1',
];
const sorted = (values: string[]) => [...values].sort();

for (const backend of archiveBackends()) {
  describe(`${backend.name} archive scope: hostile namespaces in one table`, () => {
    const namespaces = ['default', 'ab', 'abc', ...HOSTILE];
    let table: ArchiveTable;
    const archives = new Map<string, Archive>();

    beforeAll(async () => {
      table = await backend.table();
      for (const [i, ns] of namespaces.entries()) {
        const archive = await table.open({ namespace: ns });
        archives.set(ns, archive);
        // The same conversation id and labels in every namespace.
        await archive.write([
          summary('shared', 'l', `tapir notes of namespace ${i}`, { start: minute(i), end: minute(i) }),
          summary('shared', 'other', `okapi notes of namespace ${i}`, { start: minute(i), end: minute(i) }),
          transcript('shared', 't', [message('shared', i, `tapir words of namespace ${i}`)]),
        ]);
      }
    });
    afterAll(async () => {
      for (const archive of archives.values()) await archive.close();
      await table.cleanup();
    });

    it('search, list and read see only their own namespace', async () => {
      for (const [i, ns] of namespaces.entries()) {
        const archive = archives.get(ns)!;
        const hits = await archive.search({ conversationId: 'shared', query: 'tapir okapi notes words namespace', limit: 50 });
        expect(sorted(hits.map((h) => h.entry.content)), ns).toEqual(
          sorted([`tapir notes of namespace ${i}`, `okapi notes of namespace ${i}`, `[${minute(i)}] user: tapir words of namespace ${i}`]),
        );
        // A messagesOnly search reads the key in place of namespace and conversation, and checks each row by it.
        const lean = await archive.search({ conversationId: 'shared', query: 'tapir okapi notes words namespace', limit: 50, messagesOnly: true });
        expect(sorted(lean.map((h) => h.entry.content)), ns).toEqual(sorted(hits.map((h) => h.entry.content)));
        expect(
          lean.every((h) => h.entry.conversationId === 'shared'),
          ns,
        ).toBe(true);
        expect((await archive.list({ conversationId: 'shared' })).every((e) => e.content.endsWith(`namespace ${i}`))).toBe(true);
        expect((await archive.list({ conversationId: 'shared', kind: 'summary', depth: 0, from: minute(-100), to: minute(100) })).length).toBe(2);
        expect((await archive.read('shared', ['l', 't', 'other'])).map((e) => e.content.endsWith(`namespace ${i}`))).toEqual([true, true, true]);
      }
    });

    it('mark and delete touch only their own namespace', async () => {
      const [victim, attacker] = [archives.get('abc')!, archives.get("' OR '1'='1")!];
      await attacker.mark('shared', ['l', 'other'], "p' OR '1'='1");
      await attacker.delete('shared', ['t', '%', '*']);
      expect((await victim.read('shared', ['l', 'other', 't'])).map((e) => [e.label, e.parentLabel])).toEqual([
        ['l', undefined],
        ['other', undefined],
        ['t', undefined],
      ]);
      expect((await attacker.read('shared', ['l', 't'])).map((e) => [e.label, e.parentLabel])).toEqual([['l', "p' OR '1'='1"]]);
      for (const ns of namespaces.filter((n) => n !== "' OR '1'='1")) {
        expect(await archives.get(ns)!.list({ conversationId: 'shared', unmarkedOnly: true }), ns).toHaveLength(3);
      }
    });
  });

  describe(`${backend.name} archive scope: hostile conversation ids, labels and parent labels`, () => {
    const ids = ['abc', 'ab', ...HOSTILE];
    let table: ArchiveTable;
    let archive: Archive;

    beforeAll(async () => {
      table = await backend.table();
      archive = await table.open();
      // Every conversation holds every hostile label, and a row whose label is the conversation id itself.
      for (const [i, id] of ids.entries()) {
        await archive.write([...HOSTILE, 'plain'].map((label, k) => summary(id, label, `pelican ${i} ${k}`, { start: minute(k), end: minute(k) })));
      }
    });
    afterAll(async () => {
      await archive.close();
      await table.cleanup();
    });

    it('search and list return exactly the rows of the id given', async () => {
      for (const [i, id] of ids.entries()) {
        const own = new Set([...HOSTILE, 'plain'].map((_, k) => `pelican ${i} ${k}`));
        const hits = await archive.search({ conversationId: id, query: 'pelican', limit: 50 });
        expect(hits.length, id).toBe(own.size);
        expect(
          hits.every((h) => h.entry.conversationId === id && own.has(h.entry.content)),
          id,
        ).toBe(true);
        const lean = await archive.search({ conversationId: id, query: 'pelican', limit: 50, messagesOnly: true });
        expect(sorted(lean.map((h) => h.entry.content)), id).toEqual(sorted(hits.map((h) => h.entry.content)));
        expect(
          lean.every((h) => h.entry.conversationId === id && h.entry.kind === 'summary'),
          id,
        ).toBe(true);
        const listed = await archive.list({ conversationId: id, kind: 'summary', depth: 0 });
        expect(listed.map((e) => e.content).sort(), id).toEqual([...own].sort());
      }
    });

    it('read returns exactly the label asked: quotes, wildcards and backslashes match only themselves', async () => {
      for (const [i, id] of ids.entries()) {
        for (const [k, label] of HOSTILE.entries()) {
          expect(
            (await archive.read(id, [label])).map((e) => e.content),
            `${id} / ${label}`,
          ).toEqual([`pelican ${i} ${k}`]);
        }
        expect(await archive.read(id, ["plain' OR '1'='1", 'pla%', 'pla_n', 'plai*', 'PLAIN'])).toEqual([]);
      }
    });

    it('mark and delete change exactly the labels named in the conversation named', async () => {
      const parent = "parent\\' OR '1'='1\nwith a newline";
      await archive.mark('%', ['%', '*', "' OR '1'='1"], parent);
      expect((await archive.read('%', ['%', '*', "' OR '1'='1", '_', 'plain'])).map((e) => e.parentLabel ?? null)).toEqual([
        parent,
        parent,
        parent,
        null,
        null,
      ]);
      for (const id of ids.filter((id) => id !== '%')) {
        expect(await archive.list({ conversationId: id, unmarkedOnly: true }), id).toHaveLength(HOSTILE.length + 1);
      }
      await archive.delete('ab%', ['_', '\\', 'line\nbreak']);
      expect(sorted((await archive.list({ conversationId: 'ab%' })).map((e) => e.label))).toEqual(
        sorted([...HOSTILE, 'plain'].filter((l) => !['_', '\\', 'line\nbreak'].includes(l))),
      );
      for (const id of ids.filter((id) => id !== 'ab%')) {
        expect(await archive.list({ conversationId: id }), id).toHaveLength(HOSTILE.length + 1);
      }
    });
  });
}
