/**
 * Every TypeScript block of README.md and docs/*.md type-checks against the built package, as a user would paste it
 * (test/support/docs-code.ts): a failing block is reported at its Markdown file and line. A block that is not a
 * module on its own is marked ```ts fragment; the marks stay rare. Needs dist/ (`npm run build`, or `npm test`'s
 * pretest).
 */
import { existsSync, readFileSync } from 'node:fs';
import { beforeAll, describe, expect, it } from 'vitest';
import { fileCleanups } from './support/cleanups.js';
import { type BlockDiagnostic, checkBlocks, documentationBlocks, extractBlocks, paragraphsMissingFrom } from './support/docs-code.js';

const cleanups = fileCleanups();
const blocks = documentationBlocks();
let diagnostics: BlockDiagnostic[];

beforeAll(async () => {
  expect(existsSync(new URL('../dist/src/index.d.ts', import.meta.url)), 'dist/ is built').toBe(true);
  diagnostics = checkBlocks({ dir: await cleanups.tempDir('memfold-docs-code-'), blocks });
});

describe('the TypeScript blocks of README.md and docs/', () => {
  it('are found, few of them marked as fragments', () => {
    expect(blocks.length).toBeGreaterThan(10);
    expect(blocks.filter((block) => block.fragment).length).toBeLessThanOrEqual(2);
  });

  it('raise no compiler error outside the blocks', () => {
    expect(diagnostics.filter((d) => d.block.line === 0).map((d) => d.message)).toEqual([]);
  });

  it.each(blocks.filter((block) => !block.fragment).map((block) => [`${block.file}:${block.line}`, block] as const))('%s type-checks', (_, block) => {
    expect(diagnostics.filter((d) => d.block === block).map((d) => d.message)).toEqual([]);
  });
});

describe('the recipes of docs/library.md, Integrations', () => {
  const recipes = blocks.filter((block) => block.file === 'docs/library.md' && block.section === 'Integrations');
  const runner = readFileSync(new URL('integration/recipes.integration.test.ts', import.meta.url), 'utf8');

  it.each(recipes.map((block) => [`${block.file}:${block.line}`, block] as const))(
    '%s is run, as written, by test/integration/recipes.integration.test.ts',
    (_, block) => {
      expect(paragraphsMissingFrom({ block, source: runner })).toEqual([]);
    },
  );

  it('are found', () => {
    expect(recipes.length).toBeGreaterThanOrEqual(3);
  });
});

describe('the check', () => {
  const markdown = [
    '# Page',
    '```sh',
    'echo "```ts inside a shell block is no opening"',
    '```',
    '```ts',
    "import { createMemfold } from 'memfold';",
    'const memfold = await createMemfold();',
    'const n: number = memfold.history;',
    '```',
    '```ts fragment',
    '  .then(broken',
    '```',
  ].join('\n');

  it('reports an error at its Markdown line, and leaves fragments unchecked', async () => {
    const planted = extractBlocks({ file: 'docs/planted.md', markdown });
    expect(planted.map((block) => [block.line, block.fragment])).toEqual([
      [6, false],
      [11, true],
    ]);
    const found = checkBlocks({ dir: await cleanups.tempDir('memfold-docs-code-planted-'), blocks: planted });
    expect(found.map((d) => d.message)).toEqual([expect.stringMatching(/^docs\/planted\.md:8:7: error TS2322: /)]);
  });

  it('finds a recipe paragraph the runner changed, and takes one Biome reformatted', () => {
    const [block] = extractBlocks({ file: 'docs/x.md', markdown: "```ts\nimport { a } from 'a';\n\nconst x = f({ a: 1, b: 2 }); // note\n\nf(x);\n```" });
    expect(paragraphsMissingFrom({ block: block!, source: 'const x = f({\n  a: 1,\n  b: 2,\n});\nf(x);' })).toEqual([]);
    expect(paragraphsMissingFrom({ block: block!, source: 'const x = f({ a: 1, b: 3 });\nf(x);' })).toEqual(['constx=f({a:1,b:2});']);
  });
});
