/**
 * LoCoMo (snap-research) conversations as memfold messages. Turns carry no time of their own: every
 * turn gets its session's date, and its session's key as `sessionId` (`session_3`). The first speaker is the `user`, the second the `assistant`, each
 * with `name` = the speaker, so archived text keeps who said what. `dia_id`s travel beside the
 * messages (never inside them) for evaluation.
 */
import { readFile } from 'node:fs/promises';
import type { NewMessage } from '../../conversation/types.js';
import { InvalidArgumentError } from '../../errors.js';

export interface LocomoTurn {
  speaker: string;
  dia_id: string;
  text: string;
  blip_caption?: string;
}

export interface LocomoQuestion {
  question: string;
  answer?: string | number;
  evidence?: string[];
  category: number;
  adversarial_answer?: string;
}

export interface LocomoSample {
  sample_id: string;
  conversation: Record<string, unknown> & { speaker_a: string; speaker_b: string };
  qa: LocomoQuestion[];
}

export interface LocomoConversation {
  id: string;
  messages: NewMessage[];
  /** dia_id of each message, same order. */
  turnIds: string[];
  /** `speaker: text` of each turn as the dataset prints it (no photo caption), same order. */
  turnLines: string[];
  questions: LocomoQuestion[];
}

const MONTHS = ['january', 'february', 'march', 'april', 'may', 'june', 'july', 'august', 'september', 'october', 'november', 'december'];

/** "1:56 pm on 8 May, 2023" → ISO time (read as UTC). */
export function parseLocomoDate(text: string): string {
  const match = /(\d{1,2}):(\d{2})\s*(am|pm)\s+on\s+(\d{1,2})\s+([A-Za-z]+),?\s+(\d{4})/i.exec(text);
  const month = match ? MONTHS.indexOf(match[5]!.toLowerCase()) : -1;
  if (!match || month < 0) throw new InvalidArgumentError('session_date_time', `cannot read "${text}"`);
  const hour = (Number(match[1]) % 12) + (match[3]!.toLowerCase() === 'pm' ? 12 : 0);
  return new Date(Date.UTC(Number(match[6]), month, Number(match[4]), hour, Number(match[2]))).toISOString();
}

export function locomoConversation(sample: LocomoSample): LocomoConversation {
  const c = sample.conversation;
  const sessions = Object.keys(c)
    .map((key) => /^session_(\d+)$/.exec(key))
    .filter((m): m is RegExpExecArray => m !== null)
    .map((m) => Number(m[1]))
    .sort((a, b) => a - b);
  const messages: NewMessage[] = [];
  const turnIds: string[] = [];
  const turnLines: string[] = [];
  for (const n of sessions) {
    const turns = c[`session_${n}`] as LocomoTurn[];
    const createdAt = parseLocomoDate(String(c[`session_${n}_date_time`]));
    for (const turn of turns) {
      const photo = turn.blip_caption ? ` [shares a photo: ${turn.blip_caption}]` : '';
      messages.push({
        role: turn.speaker === c.speaker_a ? 'user' : 'assistant',
        name: turn.speaker,
        content: `${turn.text}${photo}`,
        createdAt,
        sessionId: `session_${n}`,
      });
      turnIds.push(turn.dia_id);
      turnLines.push(`${turn.speaker}: ${turn.text}`);
    }
  }
  return { id: sample.sample_id, messages, turnIds, turnLines, questions: sample.qa };
}

export async function loadLocomo(file: string): Promise<LocomoConversation[]> {
  const samples = JSON.parse(await readFile(file, 'utf8')) as LocomoSample[];
  if (!Array.isArray(samples)) throw new InvalidArgumentError('dataset', 'a LoCoMo file holds a JSON list of samples');
  return samples.map(locomoConversation);
}
