/**
 * Text bound for a terminal, made inert: message content is data from anyone (users, tools, imported
 * files), and a raw escape sequence in it could recolour, retitle or rewrite what the operator sees.
 */

/** C0 controls except tab and line feed, DEL, and C1 controls. ESC is among them, so no sequence survives. */
const CONTROL_CHARACTERS = /[\u0000-\u0008\u000b-\u001f\u007f-\u009f]/g;

/** Each control character shown as its `\uXXXX` escape (ESC becomes `\u001b`); tabs and line feeds stay. */
export function escapeControlCharacters(text: string): string {
  return text.replace(CONTROL_CHARACTERS, (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`);
}
