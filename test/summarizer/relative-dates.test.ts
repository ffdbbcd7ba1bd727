import { describe, expect, it } from 'vitest';
import { resolveRelativeDates } from '../../src/summarizer/extractive/relative-dates.js';

// 2023-05-08 is a Monday; 2023-05-13 a Saturday.
const MONDAY = new Date('2023-05-08T13:56:00.000Z');
const SATURDAY = new Date('2023-05-13T09:00:00.000Z');

describe('resolveRelativeDates', () => {
  const cases: Array<[string, Date, string]> = [
    ['I went yesterday.', MONDAY, 'I went yesterday (2023-05-07).'],
    ['today is great', MONDAY, 'today (2023-05-08) is great'],
    ['see you tomorrow', MONDAY, 'see you tomorrow (2023-05-09)'],
    ['last night we talked', MONDAY, 'last night (2023-05-07) we talked'],
    ['the day before yesterday', MONDAY, 'the day before yesterday (2023-05-06)'],
    ['We met last Friday', MONDAY, 'We met last Friday (2023-05-05)'],
    ['We met last Monday', MONDAY, 'We met last Monday (2023-05-01)'],
    ['last Friday', SATURDAY, 'last Friday (2023-05-12)'],
    ['next Monday', MONDAY, 'next Monday (2023-05-15)'],
    ['this Friday', MONDAY, 'this Friday (2023-05-12)'],
    ['two weeks ago', MONDAY, 'two weeks ago (week of 2023-04-24)'],
    ['3 days ago', MONDAY, '3 days ago (2023-05-05)'],
    ['a couple of days ago', MONDAY, 'a couple of days ago (2023-05-06)'],
    ['a year ago', MONDAY, 'a year ago (2022)'],
    ['five months ago', MONDAY, 'five months ago (2022-12)'],
    ['in 3 days', MONDAY, 'in 3 days (2023-05-11)'],
    ['next week', MONDAY, 'next week (week of 2023-05-15)'],
    ['last week', SATURDAY, 'last week (week of 2023-05-01)'],
    ['last weekend', MONDAY, 'last weekend (weekend of 2023-05-06)'],
    ['last weekend', SATURDAY, 'last weekend (weekend of 2023-05-06)'],
    ['this weekend', MONDAY, 'this weekend (weekend of 2023-05-13)'],
    ['last month', MONDAY, 'last month (2023-04)'],
    ['Last year I painted', MONDAY, 'Last year (2022) I painted'],
    ['next year', MONDAY, 'next year (2024)'],
    ['a few days ago', MONDAY, 'a few days ago'],
    ['on Friday', MONDAY, 'on Friday'],
    ['yesterday (2023-05-07) again', MONDAY, 'yesterday (2023-05-07) again'],
  ];
  it.each(cases)('%s (said %s)', (input, base, expected) => {
    expect(resolveRelativeDates(input, base)).toBe(expected);
  });

  it('resolves several phrases in one text and leaves text without a valid date alone', () => {
    expect(resolveRelativeDates('yesterday and last year', MONDAY)).toBe('yesterday (2023-05-07) and last year (2022)');
    expect(resolveRelativeDates('yesterday', new Date('nope'))).toBe('yesterday');
  });
});
