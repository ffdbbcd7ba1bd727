import { describe, expect, it } from 'vitest';
import { filterWhere, labelsWhere, sqlNumber, sqlString } from '../../src/archive/lancedb/lancedb-filter.js';

describe('where-clause builder', () => {
  it('quotes strings as SQL literals with single quotes doubled, leaving backslashes, % and _ as data', () => {
    expect(sqlString("it's")).toBe("'it''s'");
    expect(sqlString("x' OR 1=1 --")).toBe("'x'' OR 1=1 --'");
    expect(sqlString('a\\b%_')).toBe("'a\\b%_'");
    expect(sqlString('')).toBe("''");
  });

  it('accepts only finite numbers, integers where asked', () => {
    expect(sqlNumber(3, 'depth', { integer: true })).toBe('3');
    expect(() => sqlNumber(Number.NaN, 'from')).toThrow(/from/);
    expect(() => sqlNumber(Infinity, 'from')).toThrow(/from/);
    expect(() => sqlNumber(1.5, 'depth', { integer: true })).toThrow(/depth: must be an integer/);
    expect(() => sqlNumber('1 OR 1=1' as unknown as number, 'depth')).toThrow(/depth/);
  });

  it('always starts with the namespace and the conversation', () => {
    expect(filterWhere('ns', { conversationId: "c'1" })).toBe("namespace = 'ns' AND conversation_id = 'c''1'");
    expect(
      filterWhere('ns', { conversationId: 'c', depth: 2, kind: 'summary', from: '2024-01-01T00:00:00Z', to: '2024-01-02T00:00:00Z', unmarkedOnly: true }),
    ).toBe(
      "namespace = 'ns' AND conversation_id = 'c' AND depth = 2 AND kind = 'summary' AND end_ms >= 1704067200000 AND start_ms <= 1704153600000 AND parent_label IS NULL",
    );
    expect(labelsWhere('ns', 'c', ["a'", 'b'])).toBe("namespace = 'ns' AND conversation_id = 'c' AND label IN ('a''', 'b')");
  });

  it('rejects values that are not what the field holds', () => {
    expect(() => filterWhere('ns', { conversationId: '' })).toThrow(/conversationId/);
    expect(() => filterWhere('ns', { conversationId: 'c', depth: -1 })).toThrow(/depth/);
    expect(() => filterWhere('ns', { conversationId: 'c', kind: "summary' OR '1'='1" as 'summary' })).toThrow(/kind/);
    expect(() => filterWhere('ns', { conversationId: 'c', from: "2024' OR '1'='1" })).toThrow(/from/);
  });
});
