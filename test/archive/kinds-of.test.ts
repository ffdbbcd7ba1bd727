/**
 * The kinds of what a question counts or lists, from WordNet's hyponyms: the words the conversation uses for a
 * category the question only names ("guitar" and "drum" for "musical instruments").
 */
import { describe, expect, it } from 'vitest';
import { kindsOf, nounLemma, questionCategories } from '../../src/archive/ranking/kinds-of.js';
import { closeWordNet, hyponyms, isNoun } from '../../src/archive/ranking/wordnet.js';

describe('WordNet hyponyms', () => {
  it('lists the kinds of a noun, nearest first, its own words left out', () => {
    const kinds = hyponyms('musical instrument', { limit: 300 });
    expect(kinds).toEqual(expect.arrayContaining(['guitar', 'drum', 'piano', 'violin', 'percussion instrument', 'stringed instrument']));
    expect(kinds).not.toContain('musical instrument');
    // Nearest first: a direct kind comes before a kind of that kind.
    expect(kinds.indexOf('stringed instrument')).toBeLessThan(kinds.indexOf('guitar'));
  });

  it('stops at the depth and the limit it is given', () => {
    expect(hyponyms('musical instrument', { depth: 1, limit: 300 })).not.toContain('guitar');
    expect(hyponyms('musical instrument', { limit: 5 })).toHaveLength(5);
  });

  it('knows nouns, and gives nothing for a word it does not know or a noun without kinds', () => {
    expect(isNoun('guitar')).toBe(true);
    expect(isNoun('musical instrument')).toBe(true);
    expect(isNoun('qwzxv')).toBe(false);
    expect(hyponyms('qwzxv')).toEqual([]);
    expect(hyponyms('aardvark')).toEqual([]);
  });

  it('gives the same list every time, and again after the files are closed and reopened', () => {
    const first = hyponyms('sport');
    closeWordNet();
    expect(hyponyms('sport')).toEqual(first);
  });
});

describe('questionCategories', () => {
  it('finds the category a count names, two words as one noun where WordNet has it', () => {
    expect(questionCategories('How many musical instruments does Maria play?', 'count')).toEqual(['musical_instrument']);
  });

  it('count: only questions asking a count or total', () => {
    expect(questionCategories('Which sports does John play?', 'count')).toEqual([]);
    expect(questionCategories('How many sports does John play?', 'count')).toEqual(['sport']);
  });

  it('category: "which", "what", "what kinds of" name a category; "what did" does not', () => {
    expect(questionCategories('Which cities has Jon visited?', 'category')).toEqual(['city']);
    expect(questionCategories('What kinds of sports does John like?', 'category')).toEqual(['sport']);
    expect(questionCategories('What hobbies does Calvin have?', 'category')).toEqual(['hobby']);
    expect(questionCategories('What did Caroline research?', 'category')).toEqual([]);
    expect(questionCategories('When did Melanie paint a sunrise?', 'category')).toEqual([]);
    // A time is not a category: "how many days ago", "which year", "how many times".
    expect(questionCategories('How many days ago did I run the 5K?', 'category')).toEqual([]);
    expect(questionCategories('Which year did Jon open his studio?', 'category')).toEqual([]);
    expect(questionCategories('How many times did I go to the gym?', 'count')).toEqual([]);
  });

  it('none: nothing', () => {
    expect(questionCategories('How many musical instruments does Maria play?', 'none')).toEqual([]);
  });

  it('reads plurals as their singular', () => {
    expect(nounLemma('sports')).toBe('sport');
    expect(nounLemma('hobbies')).toBe('hobby');
    expect(nounLemma('boxes')).toBe('box');
    expect(nounLemma('qwzxvs')).toBeUndefined();
  });
});

describe('kindsOf', () => {
  it('gives the words a conversation uses for the kinds, not the question’s own', () => {
    const words = kindsOf('How many musical instruments does Maria play?', { questions: 'count' });
    expect(words).toEqual(expect.arrayContaining(['guitar', 'drum', 'piano', 'violin', 'organ']));
    expect(words).not.toContain('instrument');
    expect(words).not.toContain('musical');
    // A compound counts by its head: "barrel organ" gives "organ", never "barrel".
    expect(words).not.toContain('barrel');
  });

  it('is empty for a question that names no category', () => {
    expect(kindsOf('When did Caroline go to the LGBTQ support group?', { questions: 'category' })).toEqual([]);
  });
});
