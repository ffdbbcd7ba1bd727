/**
 * Who may talk to the HTTP server, pure. Bound to a loopback address, only this machine can reach it, and a token
 * is optional; bound to anything else, a bearer token is required, and the server refuses to start without one.
 * The Host header is checked on loopback too, so a web page cannot reach the server through DNS rebinding.
 */
import { timingSafeEqual } from 'node:crypto';
import { isIPv6 } from 'node:net';
import { InvalidArgumentError } from '../errors.js';

/** 127.0.0.0/8, each part a decimal byte. */
const IPV4_LOOPBACK = /^127\.(?:25[0-5]|2[0-4]\d|1?\d?\d)\.(?:25[0-5]|2[0-4]\d|1?\d?\d)\.(?:25[0-5]|2[0-4]\d|1?\d?\d)$/;

/** `localhost`, any address of 127.0.0.0/8 and `::1` in any spelling (case and brackets aside). */
export function isLoopback(host: string): boolean {
  const name = host.toLowerCase().replace(/^\[(.*)\]$/, '$1');
  if (name === 'localhost' || IPV4_LOOPBACK.test(name)) return true;
  // The URL parser writes an IPv6 address in its one short form: [::1] for 0:0:0:0:0:0:0:1 too.
  return isIPv6(name) && new URL(`http://[${name}]/`).hostname === '[::1]';
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

/**
 * Whether a loopback server answers a request with this Host header: a loopback name (`localhost`, 127.0.0.0/8,
 * `[::1]`, in any case) at the server's port. A page that reached the server through DNS rebinding sends its own
 * domain name here, which is refused.
 */
export function loopbackHostAllowed(header: string | undefined, port: number): boolean {
  const match = /^(\[[^\]]*\]|[^:]+):(\d+)$/.exec(header?.trim() ?? '');
  return match !== null && Number(match[2]) === port && isLoopback(match[1]!);
}
