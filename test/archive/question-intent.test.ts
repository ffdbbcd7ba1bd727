/**
 * What a question asks for, read from its wording: a count over sessions, the value as it stands now, a
 * recommendation fitted to the user, or a plain fact; and the user's own statements of likes and plans.
 */
import { describe, expect, it } from 'vitest';
import { questionIntent, statesPreference } from '../../src/archive/ranking/question-intent.js';

describe('questionIntent', () => {
  it.each([
    'How many plants did I buy over the last two months?',
    'How much did I spend on concert tickets in total?',
    'What are all the cities I visited for work?',
    'How often do I go to the gym?',
  ])('a count or total: %s', (question) => {
    expect(questionIntent(question)).toMatchObject({ aggregate: true, preference: false });
  });

  it.each(['What is my current job title?', 'Where do I live now?', 'Do I still have the blue bicycle?', 'What was the most recent book I finished?'])(
    'the latest value: %s',
    (question) => {
      expect(questionIntent(question)).toMatchObject({ latest: true, aggregate: false, preference: false });
    },
  );

  it.each([
    'Can you suggest a hotel for my trip to Lisbon?',
    'Any tips for my garden this spring?',
    'What should I cook for dinner tonight?',
    'Could you recommend a podcast for my commute?',
  ])('a recommendation: %s', (question) => {
    expect(questionIntent(question)).toMatchObject({ preference: true, aggregate: false });
  });

  it.each(['What is the name of my puppy?', 'Which airline did I fly with to Tokyo?'])('a plain fact about the user, in the first person: %s', (question) => {
    expect(questionIntent(question)).toEqual({ aggregate: false, latest: false, preference: false, self: true });
  });

  it('a plain fact about someone else', () => {
    expect(questionIntent('When did Caroline go to the LGBTQ support group?')).toEqual({ aggregate: false, latest: false, preference: false, self: false });
  });

  it('a span of time is not a count over the conversation', () => {
    expect(questionIntent('How many days ago did I buy the new tent?').aggregate).toBe(false);
    expect(questionIntent('How many weeks passed between my two dentist visits?').aggregate).toBe(false);
  });

  it('may be a count and the latest value at once', () => {
    expect(questionIntent('How many bikes do I own now?')).toMatchObject({ aggregate: true, latest: true });
  });
});

describe('statesPreference', () => {
  it.each([
    'I prefer small family-run places over big chains.',
    "I'm really into jazz these days.",
    'My favorite cuisine is Thai.',
    'I usually run in the morning before work.',
    "I'm planning a trip to Japan in April.",
    'I am allergic to peanuts.',
  ])('a statement of likes, habits or plans: %s', (text) => {
    expect(statesPreference(text)).toBe(true);
  });

  it.each(['The hotel has a pool and a spa.', 'You might like the museum downtown.', 'Paris is lovely in spring.'])('not one: %s', (text) => {
    expect(statesPreference(text)).toBe(false);
  });
});
