/**
 * The timeline page, pure: a page model in, one self-contained HTML document out. The model travels as JSON in a
 * `<script type="application/json">` block (escaped so no stored text can close it) and `timeline-script.ts`
 * draws it; a Content-Security-Policy lets only this page's own style and script run and nothing load.
 */
import { createHash } from 'node:crypto';
import type { TimelineModel } from './timeline-model.js';
import { TIMELINE_SCRIPT } from './timeline-script.js';
import { TIMELINE_CSS } from './timeline-style.js';

const HTML_ESCAPES: Record<string, string> = { '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' };

/** Text for HTML element content or a quoted attribute value. */
export function escapeHtml(text: string): string {
  return text.replace(/[&<>"']/g, (ch) => HTML_ESCAPES[ch]!);
}

/**
 * JSON that is safe inside a `<script>` element: `<`, `>` and `&` as unicode escapes, so neither `</script>` nor
 * `<!--` can end or change the block; U+2028/2029 too, so the text stays valid where it is parsed as script.
 */
export function jsonForScript(value: unknown): string {
  return JSON.stringify(value).replace(/[<>&\u2028\u2029]/g, (ch) => `\\u${ch.charCodeAt(0).toString(16).padStart(4, '0')}`);
}

/** A CSP source for an inline block: its SHA-256, so only this exact text runs. */
function cspHash(text: string): string {
  return `'sha256-${createHash('sha256').update(text, 'utf8').digest('base64')}'`;
}

/** How many batches each depth holds, for the header line. */
function depthSummary(model: TimelineModel): string {
  return model.depths.map((depth) => `depth ${depth}: ${model.batches.filter((b) => b.depth === depth).length}`).join(' · ');
}

export function renderTimelinePage(model: TimelineModel): string {
  const csp = [`default-src 'none'`, `style-src ${cspHash(TIMELINE_CSS)}`, `script-src ${cspHash(TIMELINE_SCRIPT)}`, `base-uri 'none'`, `form-action 'none'`];
  const stats = [
    `${model.batches.length} ${model.batches.length === 1 ? 'batch' : 'batches'}`,
    depthSummary(model),
    model.live ? `${model.live.messages} live messages` : 'no live messages',
    `generated ${model.generatedAt.slice(0, 16).replace('T', ' ')} UTC`,
  ].filter((part) => part !== '');
  const empty = model.batches.length === 0 ? '<p class="empty">No archived batches yet: nothing has been compacted.</p>' : '';
  return `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta http-equiv="Content-Security-Policy" content="${csp.join('; ')}">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>memfold timeline · ${escapeHtml(model.conversationId)}</title>
<style>${TIMELINE_CSS}</style>
</head>
<body>
<header>
<h1>memfold timeline <code>${escapeHtml(model.conversationId)}</code></h1>
<span class="stats">${escapeHtml(stats.join(' · '))}</span>
<span class="zoom"><button type="button" id="zoom-out" title="Zoom out">−</button><button type="button" id="zoom-fit">fit</button><button type="button" id="zoom-in" title="Zoom in">+</button></span>
</header>
<div class="card timeline">
<div class="labels" id="lane-labels"><div class="axis-label">UTC</div></div>
<div class="scroller"><div class="track" id="track"><div class="axis" id="axis"></div></div></div>
</div>
${empty}<div class="card" id="panel" hidden></div>
<script type="application/json" id="timeline-data">${jsonForScript(model)}</script>
<script>${TIMELINE_SCRIPT}</script>
</body>
</html>
`;
}
