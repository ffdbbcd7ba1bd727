/**
 * The write pass of `memfold import`: reads the file again (so a file of a million lines is never
 * held in memory) and appends the lines the check pass kept, BATCH messages per `append` call, all
 * in one transaction: a failure on the way (the store, the disk, a file that changed since the
 * check) leaves nothing of the import written.
 */
import type { NewMessage } from '../../conversation/types.js';
import { InvalidArgumentError } from '../../errors.js';
import { streamJsonlObjects } from '../../eval/datasets/jsonl-dataset.js';
import type { Memfold } from '../../memfold.js';
import { lineFingerprint, type ImportPlan } from './import-check.js';
import { conversationOf, importLineReading, parseImportLine } from './import-jsonl.js';

/** Messages per `append` call. */
const BATCH = 1_000;
/** Messages held across all conversations before every batch is written, however short. */
const MAX_BUFFERED = 10_000;

export interface WriteOptions {
  fallback?: string;
  /** Messages appended so far. */
  onAppended?: (appended: number) => void;
}

/** Appends what `plan` says; returns the messages appended per conversation. */
export async function writeImport(
  memfold: Pick<Memfold, 'persistence' | 'config'>,
  file: string,
  plan: ImportPlan,
  options: WriteOptions = {},
): Promise<Map<string, number>> {
  const appended = new Map<string, number>();
  if ([...plan.conversations.values()].every((c) => c.append === 0)) return appended;
  await memfold.persistence.transaction(async (tx) => {
    const batches = new Map<string, NewMessage[]>();
    let buffered = 0;
    let total = 0;
    const write = async (conversationId: string, batch: NewMessage[]) => {
      if (batch.length === 0) return;
      await tx.append(conversationId, batch);
      appended.set(conversationId, (appended.get(conversationId) ?? 0) + batch.length);
      buffered -= batch.length;
      total += batch.length;
      options.onAppended?.(total);
    };
    const writeAll = async () => {
      for (const [conversationId, batch] of batches) await write(conversationId, batch);
      batches.clear();
    };

    const fingerprint = lineFingerprint();
    let lines = 0;
    for await (const object of streamJsonlObjects(file, importLineReading(memfold.config.maxMessageBytes))) {
      lines++;
      fingerprint.add(object.lineNumber, object.text);
      if (plan.skipped.has(object.lineNumber)) continue;
      const line = parseImportLine(object, memfold.config.maxMessageBytes);
      const conversationId = conversationOf(line, options.fallback);
      let batch = batches.get(conversationId);
      if (!batch) {
        batch = [];
        batches.set(conversationId, batch);
      }
      batch.push(line.message);
      buffered++;
      if (batch.length >= BATCH) {
        batches.delete(conversationId);
        await write(conversationId, batch);
      } else if (buffered >= MAX_BUFFERED) await writeAll();
    }
    await writeAll();
    // Throwing here rolls the whole import back.
    if (lines !== plan.lines || fingerprint.digest() !== plan.fingerprint) {
      throw new InvalidArgumentError('<file>', 'changed while it was being imported; nothing was written (run the import again)');
    }
  });
  return appended;
}
