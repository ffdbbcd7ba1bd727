/**
 * TypeDoc (0.28) runs on TypeScript's JavaScript compiler API, which TypeScript 7 (the project's compiler, a native
 * binary) no longer ships. `typescript-6` is TypeScript 6.0 installed under an alias; this hook hands it to TypeDoc's
 * imports of `typescript`, and every other importer keeps TypeScript 7. Run as `node --import` before TypeDoc.
 */
import { register } from 'node:module';

const hook = `export async function resolve(specifier, context, next) {
  if (specifier === 'typescript' && context.parentURL?.includes('/node_modules/typedoc/')) return next('typescript-6', context);
  return next(specifier, context);
}`;
register(`data:text/javascript,${encodeURIComponent(hook)}`, import.meta.url);
