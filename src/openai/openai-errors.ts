/**
 * The adapter decides retryability: every error of the `openai` client becomes a MemfoldError with a
 * short `details.reason` and `retryable` set. Shared by the chat and the embeddings adapters.
 *
 * Retryable: HTTP 408, 409, 429 and 5xx, timeouts, connection errors, a malformed (unparsable) body.
 * Not retryable: every other status (400, 401, 403, 404, 422, ...), an abort by the caller, anything else.
 */
import { MemfoldError, errorMessage, type MemfoldErrorCode } from '../errors.js';
import { loadedOpenAI } from './openai-client.js';

export function isRetryableStatus(status: number): boolean {
  return status === 408 || status === 409 || status === 429 || status >= 500;
}

function headerRecord(headers: unknown): Record<string, string> | undefined {
  if (!headers || typeof (headers as Headers).forEach !== 'function') return undefined;
  const out: Record<string, string> = {};
  (headers as Headers).forEach((value, key) => {
    out[key] = value;
  });
  return out;
}

export function toMemfoldError(error: unknown, code: MemfoldErrorCode, label: string, signal?: AbortSignal): MemfoldError {
  if (MemfoldError.isInstance(error)) return error;
  const make = (reason: string, retryable: boolean, extra: Record<string, unknown> = {}): MemfoldError =>
    new MemfoldError(code, `${label}: ${reason}: ${errorMessage(error)}`, { cause: error, retryable, details: { reason, ...extra } });

  const sdk = loadedOpenAI();
  if ((sdk && error instanceof sdk.APIUserAbortError) || signal?.aborted || (error as { name?: string })?.name === 'AbortError') {
    return make('aborted', false);
  }
  if (sdk && error instanceof sdk.APIConnectionTimeoutError) return make('timeout', true);
  if (sdk && error instanceof sdk.APIConnectionError) return make('connection error', true);
  if (sdk && error instanceof sdk.APIError && typeof error.status === 'number') {
    const headers = headerRecord(error.headers);
    return make(`http ${error.status}`, isRetryableStatus(error.status), { status: error.status, ...(headers ? { headers } : {}) });
  }
  // `response.json()` of a body that is not JSON: a broken proxy or server hiccup, worth another try.
  if (error instanceof SyntaxError) return make('malformed response', true);
  return make('unexpected error', false);
}
