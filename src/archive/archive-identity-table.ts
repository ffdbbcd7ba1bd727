/**
 * The name of the one-row table a LanceDB archive keeps its identity in (`lancedb/lancedb-archive-identity.ts`).
 * Apart from the adapter so that the composition root can look for it on disk without loading LanceDB.
 */
export const ARCHIVE_IDENTITY_TABLE = 'memfold_archive_identity';
