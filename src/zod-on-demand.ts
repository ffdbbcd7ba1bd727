/**
 * zod, loaded by the first check that needs it. zod is about a third of what importing memfold would otherwise cost
 * (95 modules, and every schema built at import), and a program pays it only once it validates something: the first
 * `createMemfold`, `append`, setting or tool call. Every schema memfold builds is built on first use (`onDemand`);
 * the schemas exported as values are stand-ins that build theirs on first touch (`valueOnDemand`).
 */
import type * as Zod from 'zod';
import { loadNow } from './load-now.js';

let loaded: typeof Zod.z | undefined;

/** zod's `z`, the very module `import { z } from 'zod'` gives, loaded by the first call. */
export function zod(): typeof Zod.z {
  loaded ??= loadNow<typeof Zod>('zod').z;
  return loaded;
}

/** `build()` on the first call, the same value on every later one. */
export function onDemand<T>(build: () => T): () => T {
  let built: { value: T } | undefined;
  return () => {
    built ??= { value: build() };
    return built.value;
  };
}

/**
 * An object (a schema, a shape) exported as a value, built on first touch: every read, key listing, `in` or write
 * of the stand-in goes to the object `build` makes, so `schema.parse(...)`, `z.object({ a: schema })` and
 * `Object.keys(shape)` behave as on the object itself.
 */
export function valueOnDemand<T extends object>(build: () => T): T {
  const real = onDemand(build);
  return new Proxy({} as T, {
    get: (_, key) => Reflect.get(real(), key),
    set: (_, key, value) => Reflect.set(real(), key, value),
    has: (_, key) => Reflect.has(real(), key),
    ownKeys: () => Reflect.ownKeys(real()),
    // Reported configurable: the stand-in's own target is empty, and a proxy may not report a fixed property it lacks.
    getOwnPropertyDescriptor: (_, key) => {
      const descriptor = Reflect.getOwnPropertyDescriptor(real(), key);
      return descriptor === undefined ? undefined : { ...descriptor, configurable: true };
    },
    defineProperty: (_, key, descriptor) => Reflect.defineProperty(real(), key, descriptor),
    deleteProperty: (_, key) => Reflect.deleteProperty(real(), key),
    getPrototypeOf: () => Reflect.getPrototypeOf(real()),
  });
}
