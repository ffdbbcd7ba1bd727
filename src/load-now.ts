/**
 * A dependency loaded synchronously on first use, for the few a synchronous function needs that importing memfold
 * should not load (a program that never reaches them does not pay for them). It is `require` of the package's ES
 * module build, resolved as `import` resolves it: on Node 22.12 and later (which memfold's pg-boss needs anyway)
 * that is the very module an `import` of the same name elsewhere in the program gets, so classes and schemas are
 * shared, not duplicated. Earlier, the package's CommonJS build (both packages loaded so have one).
 */
import { createRequire } from 'node:module';
import { fileURLToPath } from 'node:url';

const require = createRequire(import.meta.url);

/** The module `import(specifier)` would give, loaded now. */
export function loadNow<T>(specifier: string): T {
  try {
    return require(fileURLToPath(import.meta.resolve(specifier))) as T;
  } catch (error) {
    // Before Node 22.12 `require` cannot load an ES module: the package's CommonJS build then, a copy of its own.
    if ((error as { code?: unknown }).code === 'ERR_REQUIRE_ESM') return require(specifier) as T;
    throw error;
  }
}
