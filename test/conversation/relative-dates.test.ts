import { describe, expect, it } from 'vitest';
import { relativeDates, resolveRelativeDates } from '../../src/conversation/relative-dates.js';

// 2023-05-08 is a Monday; 2023-05-13 a Saturday.
const MONDAY = new Date('2023-05-08T13:56:00.000Z');
const SATURDAY = new Date('2023-05-13T09:00:00.000Z');

describe('resolveRelativeDates', () => {
  const cases: Array<[string, Date, string]> = [
    ['I went yesterday.', MONDAY, 'I went yesterday (7 May 2023).'],
    ['today is great', MONDAY, 'today (8 May 2023) is great'],
    ['see you tomorrow', MONDAY, 'see you tomorrow (9 May 2023)'],
    ['last night we talked', MONDAY, 'last night (7 May 2023) we talked'],
    ['the day before yesterday', MONDAY, 'the day before yesterday (6 May 2023)'],
    ['We met last Friday', MONDAY, 'We met last Friday (5 May 2023)'],
    ['We met last Monday', MONDAY, 'We met last Monday (1 May 2023)'],
    ['last Friday', SATURDAY, 'last Friday (12 May 2023)'],
    ['next Monday', MONDAY, 'next Monday (15 May 2023)'],
    ['this Friday', MONDAY, 'this Friday (12 May 2023)'],
    ['two weeks ago', MONDAY, 'two weeks ago (week of 24 April 2023)'],
    ['3 days ago', MONDAY, '3 days ago (5 May 2023)'],
    ['a couple of days ago', MONDAY, 'a couple of days ago (6 May 2023)'],
    ['a year ago', MONDAY, 'a year ago (2022)'],
    ['five months ago', MONDAY, 'five months ago (December 2022)'],
    ['in 3 days', MONDAY, 'in 3 days (11 May 2023)'],
    ['next week', MONDAY, 'next week (week of 15 May 2023)'],
    ['last week', SATURDAY, 'last week (week of 1 May 2023)'],
    ['last weekend', MONDAY, 'last weekend (weekend of 6 May 2023)'],
    ['last weekend', SATURDAY, 'last weekend (weekend of 6 May 2023)'],
    ['this weekend', MONDAY, 'this weekend (weekend of 13 May 2023)'],
    ['last month', MONDAY, 'last month (April 2023)'],
    ['Last year I painted', MONDAY, 'Last year (2022) I painted'],
    ['next year', MONDAY, 'next year (2024)'],
    ['a few days ago', MONDAY, 'a few days ago'],
    ['on Friday', MONDAY, 'on Friday'],
    ["I've had them for 3 years now", MONDAY, "I've had them for 3 years now (since 2020)"],
    ['She has been painting for two months.', MONDAY, 'She has been painting for two months (since March 2023).'],
    ['I stayed there for 3 years', MONDAY, 'I stayed there for 3 years'],
    ['yesterday (2023-05-07) again', MONDAY, 'yesterday (2023-05-07) again'],
    ['yesterday (7 May 2023) again', MONDAY, 'yesterday (7 May 2023) again'],
  ];
  it.each(cases)('%s (said %s)', (input, base, expected) => {
    expect(resolveRelativeDates(input, base)).toBe(expected);
  });

  it('leaves a figure of speech alone but not a real date after "like"', () => {
    expect(resolveRelativeDates('It feels like just yesterday I put this dress on', MONDAY)).toBe('It feels like just yesterday I put this dress on');
    expect(resolveRelativeDates('like last year, we went camping', MONDAY)).toBe('like last year (2022), we went camping');
  });

  it('resolves several phrases in one text and leaves text without a valid date alone', () => {
    expect(resolveRelativeDates('yesterday and last year', MONDAY)).toBe('yesterday (7 May 2023) and last year (2022)');
    expect(resolveRelativeDates('yesterday', new Date('nope'))).toBe('yesterday');
  });
});

describe('relativeDates, anchored (memory_read notes)', () => {
  const FRIDAY = new Date('2023-06-16T10:00:00.000Z');
  const cases: Array<[string, Date, string[]]> = [
    ['I joined last week', FRIDAY, ['last week = the week before 16 June 2023']],
    ['last weekend we hiked', MONDAY, ['last weekend = the weekend before 8 May 2023']],
    ['We met last Friday', SATURDAY, ['last Friday = Friday 12 May 2023, the Friday before 13 May 2023']],
    ['yesterday and next week', MONDAY, ['yesterday = 7 May 2023', 'next week = week of 15 May 2023']],
    ['today is great', MONDAY, []],
    ['last month', MONDAY, ['last month = April 2023']],
    ['for 3 years', MONDAY, []],
    ["I've had them for 3 years now", MONDAY, ['for 3 years now = since 2020']],
    // "The past year" is the twelve months up to the day, not the calendar year before it.
    ['the past year has been hard', FRIDAY, ['past year = the year before 16 June 2023']],
    ['busy this past month', FRIDAY, ['this past month = the month before 16 June 2023']],
  ];
  it.each(cases)('%s (said %s)', (input, base, expected) => {
    expect(relativeDates(input, base, 'anchored').map((hit) => `${input.slice(hit.start, hit.end)} = ${hit.label}`)).toEqual(expected);
  });
});
