/**
 * The generic evaluation format, for running `memfold eval` on your own conversations. Two JSONL files:
 *
 * turns, one a line, in conversation order:
 *   {"conversation_id": "c1", "turn_id": "t1", "speaker": "Ana", "text": "…", "time": "2024-05-01T10:00:00Z"}
 *   `role` (user | assistant | system) may replace or accompany `speaker`; without a role the first
 *   speaker of a conversation is the user and every other one the assistant. `time` is optional (ISO 8601).
 *
 * questions, one a line:
 *   {"conversation_id": "c1", "question": "…", "answer": "…", "evidence": ["t1"], "category": "temporal"}
 *   `answer`, `category` (default "uncategorized"), `adversarial` (default false) and `question_id` are optional.
 *
 * One zod schema per line kind checks the fields; errors name the file's line and field. Turn ids travel
 * beside the messages, never inside them.
 */
import { open, readFile, type FileHandle } from 'node:fs/promises';
import { z } from 'zod';
import type { NewMessage } from '../../conversation/types.js';
import { toIsoTime } from '../../conversation/iso-time.js';
import { parseWithSchema } from '../../conversation/schema-issues.js';
import { InvalidArgumentError } from '../../errors.js';
import { boundedLines } from './bounded-lines.js';
import { checkEvidence, noneSkipped, type EvalConversation, type EvalQuestion, type QaDataset } from '../eval-types.js';

/** One JSON object of a JSONL file: where it stands (`<file> line N`, or `line N`) for errors, and its text. */
export interface JsonlObject {
  where: string;
  /** 1-based line number in the file (blank lines count). */
  lineNumber: number;
  /** The line as read: without its line break, and without the UTF-8 BOM on line 1. */
  text: string;
  value: Record<string, unknown>;
}

const BOM = '\uFEFF';

/** The object on one line, or undefined for a blank line. A BOM opening line 1 is dropped (editors on Windows write one). */
export function parseJsonlLine(raw: string, lineNumber: number, file?: string): JsonlObject | undefined {
  const text = lineNumber === 1 && raw.startsWith(BOM) ? raw.slice(1) : raw;
  if (text.trim() === '') return undefined;
  const where = `${file ? `${file} ` : ''}line ${lineNumber}`;
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch {
    throw new InvalidArgumentError(where, 'is not valid JSON');
  }
  if (typeof value !== 'object' || value === null || Array.isArray(value)) throw new InvalidArgumentError(where, 'must be a JSON object');
  return { where, lineNumber, text, value: value as Record<string, unknown> };
}

/**
 * The JSON objects of a JSONL text, each with where it stands for errors; blank lines are skipped.
 * Shared by the eval datasets and `memfold import` (which streams files with `streamJsonlObjects`).
 */
export function readJsonlObjects(text: string, file?: string): JsonlObject[] {
  const rows: JsonlObject[] = [];
  text.split(/\r?\n/).forEach((raw, index) => {
    const row = parseJsonlLine(raw, index + 1, file);
    if (row) rows.push(row);
  });
  return rows;
}

/** Bytes a JSONL line may take unless the caller sets a limit: far above any dataset line, far below V8's longest string. */
export const DEFAULT_MAX_JSONL_LINE_BYTES = 256 * 1024 * 1024;

/**
 * The JSON objects of a JSONL file, read line by line, so a file of any size is never held whole; a line longer
 * than `maxLineBytes` (default 256 MiB) is refused naming it (`why` says which setting bounds it). `onBytes` is
 * told the bytes read so far (for progress). A file that cannot be opened or read is refused naming `field`.
 */
export async function* streamJsonlObjects(
  path: string,
  options: { field?: string; file?: string; onBytes?: (bytes: number) => void; maxLineBytes?: number; why?: string } = {},
): AsyncGenerator<JsonlObject> {
  const field = options.field ?? '<file>';
  const maxLineBytes = options.maxLineBytes ?? DEFAULT_MAX_JSONL_LINE_BYTES;
  let handle: FileHandle;
  try {
    handle = await open(path, 'r');
  } catch (error) {
    throw new InvalidArgumentError(field, `cannot be read: ${(error as Error).message}`);
  }
  const stream = handle.createReadStream({ highWaterMark: 1 << 20 });
  const tooLong = (lineNumber: number) =>
    new InvalidArgumentError(
      `${options.file ? `${options.file} ` : ''}line ${lineNumber}`,
      `is longer than ${maxLineBytes} bytes${options.why ? ` (${options.why})` : ''}: one JSON object a line, each on its own line`,
    );
  let lineNumber = 0;
  try {
    for await (const raw of boundedLines(stream, { maxLineBytes, tooLong })) {
      lineNumber++;
      options.onBytes?.(stream.bytesRead);
      const row = parseJsonlLine(raw, lineNumber, options.file);
      if (row) yield row;
    }
  } catch (error) {
    if (InvalidArgumentError.isInstance(error)) throw error;
    throw new InvalidArgumentError(field, `cannot be read: ${(error as Error).message}`);
  } finally {
    stream.destroy();
    await handle.close().catch(() => undefined);
  }
}

/** An id or text field: a non-blank string, or a number (ids like 7 are written without quotes). */
function readDatasetText(value: unknown, ctx: z.RefinementCtx): string {
  if (typeof value === 'number' && Number.isFinite(value)) return String(value);
  if (typeof value === 'string' && value.trim() !== '') return value;
  ctx.issues.push({ code: 'custom', message: 'must be a non-empty string', input: value });
  return z.NEVER;
}

const datasetText = () => z.unknown().transform(readDatasetText);
/** An optional `datasetText`; JSON's null means absent. */
const optionalDatasetText = () =>
  z
    .unknown()
    .transform((value, ctx) => (value === null ? undefined : readDatasetText(value, ctx)))
    .optional();

/** One line of the turns file. */
const turnLineSchema = z
  .object({
    conversation_id: datasetText(),
    turn_id: datasetText(),
    text: z.string({ error: 'must be a string' }),
    speaker: optionalDatasetText(),
    role: z.enum(['user', 'assistant', 'system'], { error: 'must be one of user, assistant, system' }).optional(),
    // An ISO 8601 date or time, canonical (the one date rule of every boundary).
    time: optionalDatasetText().transform((value, ctx) => (value === undefined ? undefined : toIsoTime(value, ctx))),
  })
  .check((ctx) => {
    if (ctx.value.role === undefined && ctx.value.speaker === undefined) {
      ctx.issues.push({ code: 'custom', path: ['speaker'], message: 'is required when role is absent', input: ctx.value });
    }
  });

/** One line of the questions file. */
const questionLineSchema = z.object({
  conversation_id: datasetText(),
  question_id: optionalDatasetText(),
  question: datasetText(),
  answer: optionalDatasetText(),
  evidence: z
    .array(z.union([z.string(), z.number()]), { error: 'must be a list of turn ids' })
    .nullish()
    .transform((ids) => (ids ?? []).map(String)),
  category: optionalDatasetText(),
  adversarial: z.boolean({ error: 'must be true or false' }).nullish(),
});

/** A line's value checked against `schema`, errors naming the line and the field. */
function parseLine<S extends z.ZodType>(schema: S, line: JsonlObject): z.output<S> {
  return parseWithSchema(schema, line.value, { prefix: line.where });
}

interface Building {
  conversation: EvalConversation;
  firstSpeaker?: string;
  turnIds: Set<string>;
}

/** Parses both files' texts into a dataset (pure; `names` only label errors). */
export function parseJsonlDataset(turnsText: string, questionsText: string, names = { turns: 'turns', questions: 'questions' }): QaDataset {
  const conversations = new Map<string, Building>();
  for (const line of readJsonlObjects(turnsText, names.turns)) {
    const where = line.where;
    const { conversation_id: conversationId, turn_id: turnId, text, speaker, role, time } = parseLine(turnLineSchema, line);
    let building = conversations.get(conversationId);
    if (!building) {
      building = { conversation: { id: conversationId, messages: [], turnIds: [], referenceLines: [], questions: [] }, turnIds: new Set() };
      conversations.set(conversationId, building);
    }
    if (building.turnIds.has(turnId)) throw new InvalidArgumentError(`${where}.turn_id`, `repeats "${turnId}" in conversation ${conversationId}`);
    building.turnIds.add(turnId);
    if (speaker !== undefined) building.firstSpeaker ??= speaker;
    const message: NewMessage = {
      role: role ?? (speaker === building.firstSpeaker ? 'user' : 'assistant'),
      content: text,
      ...(speaker !== undefined ? { name: speaker } : {}),
      ...(time !== undefined ? { createdAt: time } : {}),
    };
    building.conversation.messages.push(message);
    building.conversation.turnIds.push(turnId);
    building.conversation.referenceLines.push(`${speaker ?? message.role}: ${text}`);
  }

  const skipped = noneSkipped();
  const asked = new Map<string, Array<Omit<EvalQuestion, 'evidence'> & { evidence: string[] }>>();
  readJsonlObjects(questionsText, names.questions).forEach((line, index) => {
    const row = parseLine(questionLineSchema, line);
    const conversationId = row.conversation_id;
    if (!conversations.has(conversationId))
      throw new InvalidArgumentError(`${line.where}.conversation_id`, `names no conversation of the turns file ("${conversationId}")`);
    const list = asked.get(conversationId) ?? [];
    list.push({
      id: row.question_id ?? String(index),
      question: row.question,
      ...(row.answer !== undefined ? { answer: row.answer } : {}),
      evidence: row.evidence,
      category: row.category ?? 'uncategorized',
      adversarial: row.adversarial ?? false,
    });
    asked.set(conversationId, list);
  });
  for (const [id, building] of conversations) {
    building.conversation.questions = checkEvidence(building.conversation.turnIds, asked.get(id) ?? [], skipped);
  }
  return { name: 'jsonl', conversations: [...conversations.values()].map((b) => b.conversation), skipped };
}

async function readText(file: string, field: string): Promise<string> {
  try {
    return await readFile(file, 'utf8');
  } catch (error) {
    throw new InvalidArgumentError(field, `cannot be read: ${(error as Error).message}`);
  }
}

export async function loadJsonlDataset(turnsFile: string, questionsFile: string): Promise<QaDataset> {
  return parseJsonlDataset(await readText(turnsFile, '<file>'), await readText(questionsFile, '--questions'), { turns: turnsFile, questions: questionsFile });
}
