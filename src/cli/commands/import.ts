/** `memfold import <file.jsonl>`: read, validate and append a JSONL file of messages. */
import type { Memfold } from '../../memfold.js';
import { printJson, type Output } from '../output.js';
import { groupByConversation, readJsonlFile } from './import-jsonl.js';

export interface ImportOptions {
  /** Conversation of lines that name none. */
  conversation?: string;
  json: boolean;
}

export async function runImport(memfold: Memfold, file: string, options: ImportOptions, output: Output): Promise<number> {
  const groups = groupByConversation(await readJsonlFile(file), options.conversation);
  const counts: Record<string, number> = {};
  for (const [conversationId, messages] of groups) counts[conversationId] = (await memfold.append(conversationId, messages)).length;
  if (options.json) printJson(output, { imported: counts });
  else for (const [id, n] of Object.entries(counts)) output.out(`${id}: ${n} messages appended`);
  return 0;
}
