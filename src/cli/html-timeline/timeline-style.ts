/** The timeline page's CSS, inline (the page loads nothing): system fonts, one hue per depth. */
export const TIMELINE_CSS = `
:root { --bg: #f5f6f8; --card: #fff; --ink: #1d2430; --muted: #667085; --line: #e3e6eb; --accent: #1d4ed8;
  --d0: #3b82f6; --d0-bg: #e4eefe; --d1: #8b5cf6; --d1-bg: #efeafe; --d2: #d97706; --d2-bg: #fdf1dc;
  --d3: #0d9488; --d3-bg: #dcf5f2; --d4: #e11d48; --d4-bg: #fde4ea; --live: #16a34a; --live-bg: #e2f6e8; }
* { box-sizing: border-box; }
body { margin: 0; background: var(--bg); color: var(--ink); font: 14px/1.45 system-ui, -apple-system, "Segoe UI", Roboto, sans-serif; }
code, .mono, time { font-family: ui-monospace, "SFMono-Regular", Menlo, Consolas, monospace; font-size: 12px; }
header { display: flex; align-items: center; gap: 16px; flex-wrap: wrap; padding: 16px 24px 8px; }
h1 { font-size: 18px; margin: 0; font-weight: 650; }
h1 code { font-size: 16px; background: #e9ecf1; padding: 2px 6px; border-radius: 4px; }
.stats { color: var(--muted); flex: 1; }
.zoom { display: flex; gap: 4px; }
button { font: inherit; color: inherit; cursor: pointer; }
.zoom button, .close { background: var(--card); border: 1px solid var(--line); border-radius: 6px; padding: 2px 10px; }
.zoom button:hover, .close:hover { border-color: var(--muted); }
.card { background: var(--card); border: 1px solid var(--line); border-radius: 10px; margin: 8px 24px 16px; }
.timeline { display: flex; overflow: hidden; }
.labels { flex: none; width: 88px; border-right: 1px solid var(--line); }
.labels div { height: 44px; display: flex; align-items: center; padding: 0 12px; color: var(--muted); font-size: 12px; font-weight: 600; }
.labels .axis-label { height: 28px; font-weight: 400; }
.scroller { flex: 1; overflow-x: auto; }
.track { position: relative; min-width: 100%; }
.axis { position: relative; height: 28px; border-bottom: 1px solid var(--line); }
.tick { position: absolute; top: 6px; padding-left: 4px; border-left: 1px solid #c8ced8; font-size: 11px; color: var(--muted); white-space: nowrap; }
.lane { position: relative; height: 44px; border-bottom: 1px solid var(--line); }
.lane:nth-child(odd) { background: #fafbfc; }
.lane:last-child { border-bottom: 0; }
.break { position: absolute; top: 0; bottom: 0; border-left: 1px dashed #d5dae2; pointer-events: none; }
.box { position: absolute; top: 7px; height: 30px; min-width: 6px; padding: 0 6px; border: 1px solid var(--c); background: var(--c-bg);
  border-radius: 6px; font-size: 12px; text-align: left; overflow: hidden; white-space: nowrap; text-overflow: ellipsis; color: var(--ink); }
.box:hover { filter: brightness(0.96); z-index: 2; }
.box.related { box-shadow: 0 0 0 2px var(--c-bg), 0 0 0 3px var(--c); }
.box.selected { background: var(--c); color: #fff; z-index: 3; box-shadow: 0 1px 4px rgba(0, 0, 0, 0.25); }
.box:focus-visible { outline: 2px solid var(--accent); outline-offset: 2px; }
.empty { padding: 24px; color: var(--muted); }
#panel { padding: 16px 20px 20px; }
.panel-head { display: flex; align-items: baseline; gap: 12px; flex-wrap: wrap; }
.panel-head h2 { margin: 0; font-size: 16px; }
.badge { display: inline-block; padding: 1px 8px; border-radius: 999px; background: var(--c-bg); color: var(--c); font-size: 12px; font-weight: 600; }
.meta { color: var(--muted); font-size: 13px; margin: 4px 0 12px; }
.link { background: none; border: 0; padding: 0; color: var(--accent); text-decoration: underline; }
.close { margin-left: auto; }
.columns { display: grid; grid-template-columns: minmax(0, 1fr) minmax(0, 1.3fr); gap: 20px; }
@media (max-width: 900px) { .columns { grid-template-columns: minmax(0, 1fr); } }
h3 { font-size: 12px; text-transform: uppercase; letter-spacing: 0.04em; color: var(--muted); margin: 0 0 8px; }
.summary-header { color: var(--muted); margin-bottom: 6px; overflow-wrap: anywhere; }
.summary, .text { white-space: pre-wrap; overflow-wrap: anywhere; }
.scroll { max-height: 60vh; overflow: auto; padding-right: 4px; }
.child { display: block; width: 100%; text-align: left; background: var(--card); border: 1px solid var(--line); border-left: 4px solid var(--c);
  border-radius: 6px; padding: 6px 10px; margin-bottom: 6px; }
.child:hover { border-color: var(--c); }
.child .preview { color: var(--muted); font-size: 13px; display: block; overflow: hidden; white-space: nowrap; text-overflow: ellipsis; }
.message { border-left: 3px solid var(--line); padding: 4px 0 4px 10px; margin-bottom: 8px; }
.message.user { border-color: #60a5fa; }
.message.assistant { border-color: #a78bfa; }
.message.tool { border-color: #f59e0b; }
.message-head { display: flex; gap: 8px; align-items: baseline; color: var(--muted); font-size: 12px; }
.message-head .role { font-weight: 700; color: var(--ink); }
.calls, .cut { color: var(--muted); font-size: 12px; }
`;
