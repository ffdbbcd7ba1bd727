/** The members of a memfold the integrations use: a `Memfold` from `createMemfold`, or any object that has them. */
import type { Memfold } from '../memfold.js';

export type MemfoldHost = Pick<Memfold, 'append' | 'history' | 'context' | 'compact' | 'memoryRead' | 'observeUsage' | 'usage' | 'compactor'>;
