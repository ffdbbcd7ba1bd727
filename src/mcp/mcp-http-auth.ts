/**
 * Who may talk to the HTTP server, pure. Bound to a loopback address, only this machine can reach it, and a token
 * is optional; bound to anything else, a bearer token is required, and the server refuses to start without one.
 * The Host header is checked on loopback too, so a web page cannot reach the server through DNS rebinding.
 */
import { timingSafeEqual } from 'node:crypto';
import { InvalidArgumentError } from '../errors.js';

const LOOPBACK = new Set(['127.0.0.1', '::1', 'localhost']);

export function isLoopback(host: string): boolean {
  return LOOPBACK.has(host) || /^127\.\d+\.\d+\.\d+$/.test(host);
}

/** A token of fewer characters is guessable; the check is about the operator's setting, named as they set it. */
const MIN_TOKEN_CHARS = 16;

export function checkHttpAccess(host: string, token: string | undefined): void {
  if (token !== undefined && token.length < MIN_TOKEN_CHARS) {
    throw new InvalidArgumentError('--token', `must be at least ${MIN_TOKEN_CHARS} characters (or MEMFOLD_MCP_TOKEN)`);
  }
  if (!isLoopback(host) && token === undefined) {
    throw new InvalidArgumentError('--token', `is required when the server listens on ${host}, which is not a loopback address (or set MEMFOLD_MCP_TOKEN)`);
  }
}

/** Whether the `Authorization` header carries the token (compared in constant time). */
export function authorized(header: string | undefined, token: string | undefined): boolean {
  if (token === undefined) return true;
  const match = /^Bearer\s+(.+)$/i.exec(header ?? '');
  if (!match) return false;
  const given = Buffer.from(match[1]!.trim());
  const expected = Buffer.from(token);
  return given.length === expected.length && timingSafeEqual(given, expected);
}

/** Host headers a loopback server answers: its address and `localhost`, at its port. */
export function loopbackHosts(port: number): string[] {
  return [`127.0.0.1:${port}`, `localhost:${port}`, `[::1]:${port}`];
}
