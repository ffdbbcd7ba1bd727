/** Share one opening among concurrent first callers; a failed opening is retried by the next call, not cached. */
export function openOnce<T>(open: () => Promise<T>): () => Promise<T> {
  let opening: Promise<T> | undefined;
  return () => {
    opening ??= open().catch((error: unknown) => {
      opening = undefined;
      throw error;
    });
    return opening;
  };
}
