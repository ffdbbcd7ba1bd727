/** README.md and every page under docs/, as one text: what the documentation promises, wherever it says it. */
import { readdirSync, readFileSync } from 'node:fs';

const root = new URL('../../', import.meta.url);

export function documentationText(): string {
  const pages = readdirSync(new URL('docs/', root))
    .filter((name) => name.endsWith('.md'))
    .sort()
    .map((name) => readFileSync(new URL(`docs/${name}`, root), 'utf8'));
  return [readFileSync(new URL('README.md', root), 'utf8'), ...pages].join('\n');
}
