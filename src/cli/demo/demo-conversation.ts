/**
 * A deterministic multi-session conversation for the demo: a user and an assistant over many
 * sessions, with a tool call per session and three facts planted early that only the archive will
 * still hold at the end. Pure: the same options give the same messages.
 */
import type { NewMessage } from '../../conversation/types.js';

export interface PlantedFact {
  /** What the demo searches memory_read for. */
  query: string;
  /** The exact text that must come back. */
  expect: string;
  session: number;
}

export const PLANTED_FACTS: PlantedFact[] = [
  { query: 'bike lock code', expect: '4417', session: 2 },
  { query: 'staging server release path', expect: '/srv/atlas/releases/v2.3.1', session: 3 },
  { query: 'Priya birthday', expect: '14 March', session: 4 },
];

const FACT_LINES: Record<number, string> = {
  2: 'Before I forget: my bike lock code is 4417, I keep losing the note with it.',
  3: 'For the deploy, the staging server releases live in /srv/atlas/releases/v2.3.1 and nobody should touch v2.2 anymore.',
  4: "My sister Priya's birthday is on 14 March, and she collects kintsugi bowls, so that could be a gift idea.",
};

const TOPICS = [
  {
    name: 'garden',
    user: [
      'The tomatoes on the balcony are finally turning red.',
      'Should I prune the basil before it flowers?',
      'Slugs ate half the lettuce again last night.',
      'I moved the chili plants closer to the window.',
    ],
    assistant: [
      'Pinch the basil tops weekly to keep it bushy.',
      'A ring of copper tape keeps slugs off the lettuce.',
      'Tomatoes ripen evenly around 20 to 25 degrees.',
      'Chilies like six hours of sun; the window spot helps.',
    ],
  },
  {
    name: 'running',
    user: [
      'I ran 8 km this morning in 46 minutes.',
      'My left knee aches after the long runs.',
      'The half marathon is in ten weeks.',
      'Intervals on the track felt easier today.',
    ],
    assistant: [
      'Keep the long run at a pace where you can still talk.',
      'Strengthen the hips; knee pain often starts there.',
      'Add one kilometre to the long run each week, then taper.',
      'Easier intervals mean the base is building.',
    ],
  },
  {
    name: 'cooking',
    user: [
      'I tried the lentil soup with smoked paprika.',
      'The sourdough starter smells like acetone.',
      'How long should the dough proof in the fridge?',
      'Dinner for six on Saturday, one guest is vegan.',
    ],
    assistant: [
      'Feed the starter twice a day for a few days to calm the acetone.',
      'A cold proof of 12 to 16 hours gives the best flavour.',
      'A chickpea and squash tagine works for everyone.',
      'Smoked paprika and a squeeze of lemon lift lentils.',
    ],
  },
  {
    name: 'project',
    user: [
      'The parser crashes on empty input.',
      'CI takes eleven minutes, can we cut that?',
      'I renamed the config loader to settings.ts.',
      'Tests for the exporter pass locally but fail in CI.',
    ],
    assistant: [
      'Guard the empty input before tokenizing.',
      'Cache the dependencies and split the slow suite.',
      'Update the imports and the README after the rename.',
      'Check the time zone; CI runs in UTC.',
    ],
  },
  {
    name: 'reading',
    user: [
      'I finished the book about the Hanseatic League.',
      'Any novel set in Lisbon you would suggest?',
      'I read forty pages of the sailing memoir.',
      'The library hold for the new translation came in.',
    ],
    assistant: [
      'Pessoa wrote a lot about Lisbon; the Book of Disquiet is a start.',
      'The Hanseatic League ran trade from Bruges to Novgorod.',
      'Memoirs read faster once the voyage starts.',
      'Translations differ a lot; compare the first page of two.',
    ],
  },
];

/** Small seeded PRNG (mulberry32): deterministic across platforms. */
export function seeded(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

export const DEMO_SYSTEM_PROMPT = 'You are a helpful personal assistant with a long memory. Use memory_read to look up earlier conversations.';

export interface DemoOptions {
  sessions?: number;
  turnsPerSession?: number;
  start?: string;
}

/** The messages of the demo, without the system prompt, each with its time. */
export function generateDemoConversation(options: DemoOptions = {}): NewMessage[] {
  const sessions = options.sessions ?? 12;
  const turnsPerSession = options.turnsPerSession ?? 18;
  const start = Date.parse(options.start ?? '2024-01-08T09:00:00.000Z');
  const random = seeded(42);
  const pick = <T>(items: readonly T[]): T => items[Math.floor(random() * items.length)]!;
  const messages: NewMessage[] = [];
  for (let s = 1; s <= sessions; s++) {
    const sessionStart = start + (s - 1) * 4 * 86_400_000;
    let minute = 0;
    const at = () => new Date(sessionStart + minute++ * 60_000).toISOString();
    for (let t = 0; t < turnsPerSession; t++) {
      const topic = TOPICS[(s + Math.floor(t / 6)) % TOPICS.length]!;
      let userText = `${pick(topic.user)} ${pick(topic.user)}`;
      if (t === 3 && FACT_LINES[s]) userText = FACT_LINES[s]!;
      messages.push({ role: 'user', content: userText, createdAt: at() });
      if (t === 7) {
        const callId = `call_weather_${s}`;
        messages.push({
          role: 'assistant',
          content: '',
          createdAt: at(),
          toolCalls: [{ id: callId, type: 'function', function: { name: 'get_weather', arguments: JSON.stringify({ city: 'Lisbon', day: s }) } }],
        });
        messages.push({
          role: 'tool',
          toolCallId: callId,
          name: 'get_weather',
          content: JSON.stringify({ city: 'Lisbon', day: s, high_c: 14 + (s % 9), rain_mm: Math.round(random() * 12) }),
          createdAt: at(),
        });
      }
      messages.push({ role: 'assistant', content: `${pick(topic.assistant)} ${pick(topic.assistant)}`, createdAt: at() });
    }
  }
  return messages;
}
