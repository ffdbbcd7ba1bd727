/**
 * The layout's rules (.dependency-cruiser.cjs, their one source of truth, which `npm run lint` also checks): no import
 * cycle in src/; compaction/ talks to its ports as types only and never to an adapter; a compaction stage never
 * imports the orchestrator; conversation/ and tokens/ never import compaction/. Checked on src/, and shown to catch a
 * violation of each rule planted in a scratch tree.
 */
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { cruise, type ICruiseResult } from 'dependency-cruiser';
import extractDepcruiseOptions from 'dependency-cruiser/config-utl/extract-depcruise-options';
import { afterAll, describe, expect, it } from 'vitest';

const ROOT = path.resolve(import.meta.dirname, '..');
const CONFIG = path.join(ROOT, '.dependency-cruiser.cjs');

async function cruiseSrc(baseDir: string): Promise<ICruiseResult> {
  const options = await extractDepcruiseOptions(CONFIG);
  const { output } = await cruise(['src'], { ...options, baseDir });
  return output as ICruiseResult;
}

const violations = (result: ICruiseResult) => result.summary.violations.map((v) => `${v.rule.name}: ${v.from} -> ${v.to}`);

/** One file per rule, each breaking it once. */
const PLANTED: Record<string, string> = {
  'src/compaction/compactor.ts': 'export const compactor = 1;\n',
  'src/compaction/plan/plan.ts': "import { compactor } from '../compactor.js';\nexport const plan = compactor;\n",
  'src/compaction/view/view.ts': "import { store } from '../../persistence/kysely/store.js';\nexport const view = store;\n",
  'src/compaction/usage/usage.ts': "import { port } from '../../persistence/port.js';\nexport const usage = port;\n",
  'src/persistence/kysely/store.ts': 'export const store = 1;\n',
  'src/persistence/port.ts': 'export const port = 1;\n',
  'src/conversation/turns.ts': "import { plan } from '../compaction/plan/plan.js';\nexport const turns = plan;\n",
  'src/tools/a.ts': "import type { B } from './b.js';\nexport type A = B | 1;\n",
  'src/tools/b.ts': "import type { A } from './a.js';\nexport type B = A | 2;\n",
};

describe('the import graph of src/', () => {
  const scratch = mkdtempSync(path.join(tmpdir(), 'memfold-structure-'));
  afterAll(() => rmSync(scratch, { recursive: true, force: true }));

  it('keeps every layout rule, and reads every relative import', async () => {
    const result = await cruiseSrc(ROOT);
    expect(result.summary.totalCruised).toBeGreaterThan(250);
    expect(violations(result)).toEqual([]);
    const unresolved = result.modules.flatMap((m) =>
      m.dependencies.filter((d) => d.couldNotResolve && d.module.startsWith('.')).map((d) => `${m.source} -> ${d.module}`),
    );
    expect(unresolved).toEqual([]);
  });

  it('catches a planted violation of each rule', async () => {
    for (const [file, text] of Object.entries(PLANTED)) {
      mkdirSync(path.dirname(path.join(scratch, file)), { recursive: true });
      writeFileSync(path.join(scratch, file), text);
    }
    const found = violations(await cruiseSrc(scratch));
    expect(found).toEqual(
      expect.arrayContaining([
        'stages-not-orchestrator: src/compaction/plan/plan.ts -> src/compaction/compactor.ts',
        'compaction-no-adapter: src/compaction/view/view.ts -> src/persistence/kysely/store.ts',
        'compaction-ports-as-types: src/compaction/usage/usage.ts -> src/persistence/port.ts',
        'lower-layers-not-compaction: src/conversation/turns.ts -> src/compaction/plan/plan.ts',
        'no-circular: src/tools/a.ts -> src/tools/b.ts',
      ]),
    );
    const rules = new Set(found.map((v) => v.split(':')[0]));
    const { ruleSet } = await extractDepcruiseOptions(CONFIG);
    expect([...rules].sort()).toEqual((ruleSet?.forbidden ?? []).map((rule) => rule.name).sort());
  });
});
