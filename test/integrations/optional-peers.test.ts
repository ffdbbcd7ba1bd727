/**
 * `ai` and LangChain are optional peers: nothing `import 'memfold'` loads reaches them, or src/integrations/; only the
 * subpath entries (`memfold/ai-sdk`, `memfold/langchain`) do. Checked on the import graph (type imports count), with the
 * entries' own graphs shown to reach the packages, so the check can fail.
 */
import path from 'node:path';
import { cruise, type ICruiseResult } from 'dependency-cruiser';
import extractDepcruiseOptions from 'dependency-cruiser/config-utl/extract-depcruise-options';
import { describe, expect, it } from 'vitest';
import pkg from '../../package.json' with { type: 'json' };

const ROOT = path.resolve(import.meta.dirname, '../..');
const PEER = /(^|\/)node_modules\/(ai|langchain|@langchain\/[^/]+|@ai-sdk\/[^/]+)\//;

async function reached(entries: string[]): Promise<string[]> {
  const options = await extractDepcruiseOptions(path.join(ROOT, '.dependency-cruiser.cjs'));
  const { output } = await cruise(entries, { ...options, baseDir: ROOT });
  return (output as ICruiseResult).modules.map((module) => module.source);
}

describe('optional peers', () => {
  it('are never reached from the main entry, and are reached from the subpath entries', async () => {
    const main = await reached(['src/index.ts']);
    expect(main.length).toBeGreaterThan(200);
    expect(main.filter((source) => PEER.test(source) || source.startsWith('src/integrations/'))).toEqual([]);
    const aiSdk = await reached(['src/integrations/ai-sdk.ts']);
    expect(aiSdk.some((source) => /node_modules\/ai\//.test(source))).toBe(true);
    const langchain = await reached(['src/integrations/langchain.ts']);
    expect(langchain.some((source) => /node_modules\/langchain\//.test(source))).toBe(true);
  });

  it('are optional peers of the package, with a subpath export each', () => {
    for (const name of ['ai', 'langchain', '@langchain/core']) {
      expect(pkg.peerDependenciesMeta[name as keyof typeof pkg.peerDependenciesMeta]).toEqual({ optional: true });
      expect(pkg.dependencies).not.toHaveProperty(name);
    }
    expect(pkg.exports['./ai-sdk'].default).toBe('./dist/src/integrations/ai-sdk.js');
    expect(pkg.exports['./langchain'].default).toBe('./dist/src/integrations/langchain.js');
  });
});
