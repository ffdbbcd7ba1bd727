/** Writing a PGlite lock generation: a private draft first, then an exclusive `link()`, so it appears whole. */
import { randomUUID } from 'node:crypto';
import { link, readdir, rm, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { LOCK_FILE_NAME } from './pglite-lock-generations.js';
import { isAlive } from './pglite-lock-process.js';

/**
 * Write the content to a private file first: a lock appears by `link()`, whole, so no reader sees it half-written. The
 * draft's name carries this pid, so a draft a killed process left is known as such and removed (`removeDeadDrafts`).
 */
export async function writeDraft(dataDir: string, content: string): Promise<string> {
  const draft = path.join(dataDir, `${LOCK_FILE_NAME}.draft-${process.pid}-${randomUUID()}`);
  try {
    await writeFile(draft, `${content}\n`);
  } catch (error) {
    await rm(draft, { force: true });
    throw error;
  }
  return draft;
}

const DRAFT = /^memfold\.lock\.draft-(\d+)-/;

/** Drafts of processes that are gone (killed between writing and removing one): nothing else ever removes them. */
export async function removeDeadDrafts(dataDir: string): Promise<void> {
  for (const name of await readdir(dataDir)) {
    const pid = Number(DRAFT.exec(name)?.[1]);
    if (Number.isSafeInteger(pid) && pid > 0 && pid !== process.pid && !isAlive(pid)) await rm(path.join(dataDir, name), { force: true });
  }
}

/** Link `draft` to `file` unless `file` exists (atomic): whether this call created it. */
export async function linkNew(draft: string, file: string): Promise<boolean> {
  try {
    await link(draft, file);
    return true;
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'EEXIST') return false;
    throw error;
  }
}
