/** Resolves on the first SIGINT or SIGTERM: how the long-running commands (`mcp`, `worker`) learn to stop. */
export function untilSignal(): Promise<void> {
  return new Promise((resolve) => {
    process.once('SIGINT', () => resolve());
    process.once('SIGTERM', () => resolve());
  });
}
