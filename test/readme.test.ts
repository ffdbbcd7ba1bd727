/** README.md points at tests and commands; they must exist, or the Guarantees section promises nothing. */
import { existsSync, readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { COMMANDS } from '../src/cli/args.js';

const root = new URL('../', import.meta.url);
const readme = readFileSync(new URL('README.md', root), 'utf8');

describe('README.md', () => {
  it('names only test files that exist', () => {
    const named = [...new Set(readme.match(/test\/[\w./-]+\.ts/g) ?? [])];
    expect(named.length).toBeGreaterThan(10);
    for (const file of named) expect(existsSync(new URL(file, root)), file).toBe(true);
  });

  it('shows every CLI command in its usage block', () => {
    for (const command of Object.keys(COMMANDS)) expect(readme, command).toContain(`memfold ${command}`);
  });
});
