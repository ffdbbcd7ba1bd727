/** README.md and docs/ point at tests and commands; they must exist, or the Guarantees page promises nothing. */
import { existsSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { COMMANDS } from '../src/cli/args.js';
import { documentationText } from './support/docs-text.js';

const root = new URL('../', import.meta.url);
const readme = documentationText();

describe('README.md and docs/', () => {
  it('names only test files that exist', () => {
    const named = [...new Set(readme.match(/test\/[\w./-]+\.ts/g) ?? [])];
    expect(named.length).toBeGreaterThan(10);
    for (const file of named) expect(existsSync(new URL(file, root)), file).toBe(true);
  });

  it('shows every CLI command in its usage block', () => {
    for (const command of Object.keys(COMMANDS)) expect(readme, command).toContain(`memfold ${command}`);
  });
});
