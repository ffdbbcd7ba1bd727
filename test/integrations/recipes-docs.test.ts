/**
 * docs/integrations.md shows each recipe as the file the tests compile and run: every block marked
 * `<!-- recipe: <file> -->` is that file, its imports of this repository written as the package's.
 */
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';

const ROOT = path.resolve(import.meta.dirname, '../..');
const AS_PUBLISHED: Record<string, string> = {
  "'../../../src/index.js'": "'memfold'",
  "'../../../src/integrations/ai-sdk.js'": "'memfold/ai-sdk'",
  "'../../../src/integrations/langchain.js'": "'memfold/langchain'",
};

function published(file: string): string {
  let text = readFileSync(path.join(ROOT, file), 'utf8');
  for (const [local, name] of Object.entries(AS_PUBLISHED)) text = text.replaceAll(local, name);
  return text.trimEnd();
}

describe('docs/integrations.md', () => {
  const doc = readFileSync(path.join(ROOT, 'docs/integrations.md'), 'utf8');
  const blocks = [...doc.matchAll(/<!-- recipe: (\S+) -->\n```ts\n([\s\S]*?)\n```/g)];

  it('shows every recipe as its tested file, each in at most 10 lines', () => {
    expect(blocks.map((block) => block[1])).toEqual(['test/integrations/recipes/ai-sdk-recipe.ts', 'test/integrations/recipes/langchain-recipe.ts']);
    for (const [, file, code] of blocks) {
      expect(code, file).toBe(published(file!));
      expect(code!.split('\n').length, file).toBeLessThanOrEqual(10);
      expect(code, file).not.toContain('../');
    }
  });
});
