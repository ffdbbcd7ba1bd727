/**
 * The timeline page's script, inline. It reads the page model from the JSON block and builds the lanes and the
 * panel with DOM calls: stored text only ever reaches `textContent`, never markup, so a message cannot inject any.
 * Kept as plain ES2020 in a string (no template literals inside) because the page must load nothing.
 */
export const TIMELINE_SCRIPT = `
'use strict';
const data = JSON.parse(document.getElementById('timeline-data').textContent);
const byLabel = new Map(data.batches.map((b) => [b.label, b]));
const boxes = new Map();
const READABLE_BOX_PX = 96;
const MAX_TRACK_PX = 200000;
let zoom = 1;
let selected = null;

function el(tag, className, text) {
  const node = document.createElement(tag);
  if (className) node.className = className;
  if (text !== undefined) node.textContent = String(text);
  return node;
}
function hue(depth) { return depth === 'live' ? 'live' : 'd' + (depth % 5); }
function paint(node, depth) {
  node.style.setProperty('--c', 'var(--' + hue(depth) + ')');
  node.style.setProperty('--c-bg', 'var(--' + hue(depth) + '-bg)');
}
function when(iso) { return iso.slice(0, 10) + ' ' + iso.slice(11, 16); }
function span(item) {
  return item.start.slice(0, 10) === item.end.slice(0, 10) ? when(item.start) + ' .. ' + item.end.slice(11, 16) : when(item.start) + ' .. ' + when(item.end);
}
function unit(b) { return b.depth === 0 ? (b.count === 1 ? 'message' : 'messages') : (b.count === 1 ? 'batch' : 'batches'); }
/** Up to three session ids, else the first and last and how many (as inspect prints them). */
function sessions(ids) {
  if (ids.length <= 3) return (ids.length === 1 ? 'session ' : 'sessions ') + ids.join(', ');
  return 'sessions ' + ids[0] + ' .. ' + ids[ids.length - 1] + ' (' + ids.length + ')';
}
function splitSummary(text) {
  const newline = text.indexOf('\\n');
  const first = newline < 0 ? text : text.slice(0, newline);
  return /^\\[depth:.*\\]$/.test(first) ? { header: first, body: text.slice(first.length + 1) } : { header: '', body: text };
}

const track = document.getElementById('track');
const axis = document.getElementById('axis');
function placeBox(lane, item, depth, text, title) {
  const box = el('button', 'box', text);
  box.type = 'button';
  box.title = title;
  box.style.left = (item.x0 * 100) + '%';
  box.style.width = ((item.x1 - item.x0) * 100) + '%';
  paint(box, depth);
  box.addEventListener('click', () => select(item));
  lane.append(box);
  return box;
}
function drawLanes() {
  const labels = document.getElementById('lane-labels');
  const lanes = data.depths.map((depth) => ({ name: 'depth ' + depth, depth }));
  if (data.live) lanes.push({ name: 'live', depth: 'live' });
  for (const lane of lanes) {
    labels.append(el('div', '', lane.name));
    const row = el('div', 'lane');
    row.dataset.lane = String(lane.depth);
    for (const at of data.breaks) {
      const mark = el('div', 'break');
      mark.style.left = (at * 100) + '%';
      row.append(mark);
    }
    if (lane.depth === 'live') {
      for (const run of data.live.runs) {
        run.kind = 'live';
        const box = placeBox(row, run, 'live', run.messages + ' live', 'live history: ' + span(run) + ' · seq ' + run.firstSeq + '..' + run.lastSeq);
        box.classList.add('live');
        boxes.set(run, box);
      }
    } else {
      for (const b of data.batches.filter((x) => x.depth === lane.depth)) {
        const box = placeBox(row, b, b.depth, b.count + ' ' + unit(b), 'depth ' + b.depth + ' · ' + span(b) + ' · ' + b.count + ' ' + unit(b) + '\\n' + b.label);
        box.classList.add('batch');
        box.dataset.label = b.label;
        box.dataset.depth = String(b.depth);
        boxes.set(b, box);
      }
    }
    track.append(row);
  }
}
function layout() {
  const scroller = track.parentElement;
  // Wide enough that a typical depth-0 box (the median) can show its count; capped, and zoom scales from there.
  const widths = data.batches.filter((b) => b.depth === 0).map((b) => b.x1 - b.x0).sort((a, b) => a - b);
  const median = widths[Math.floor(widths.length / 2)] || 1;
  track.style.width = Math.max(scroller.clientWidth, Math.min(READABLE_BOX_PX / median, MAX_TRACK_PX)) * zoom + 'px';
  axis.replaceChildren();
  const width = track.clientWidth;
  let lastPx = -Infinity;
  for (const tick of data.ticks) {
    const px = tick.at * width;
    if (px - lastPx < 110 || px > width - 60) continue;
    const label = el('div', 'tick', when(tick.time));
    label.style.left = px + 'px';
    axis.append(label);
    lastPx = px;
  }
}

const panel = document.getElementById('panel');
function link(text, onClick) {
  const a = el('button', 'link', text);
  a.type = 'button';
  a.addEventListener('click', onClick);
  return a;
}
function messageView(m) {
  const node = el('div', 'message ' + m.role);
  const head = el('div', 'message-head');
  head.append(el('span', 'role', m.role + (m.name ? ' · ' + m.name : '')), el('time', '', when(m.time)), el('span', 'mono', '#' + m.seq));
  node.append(head, el('div', 'text', m.text));
  for (const call of m.toolCalls || []) node.append(el('div', 'calls mono', '→ ' + call));
  if (m.cut) node.append(el('div', 'cut', '… ' + m.cut + ' more characters (memfold search reads it whole)'));
  return node;
}
function childView(b) {
  const button = el('button', 'child');
  button.type = 'button';
  paint(button, b.depth);
  // The first words of the summary, its lines run together: the box is one line, cut by CSS.
  const preview = splitSummary(b.summary).body.replace(/\\s+/g, ' ').slice(0, 300);
  button.append(el('span', 'badge', 'depth ' + b.depth), document.createTextNode(' ' + span(b) + ' · ' + b.count + ' ' + unit(b)), el('span', 'preview', preview));
  button.addEventListener('click', () => select(b));
  return button;
}
function section(title, ...children) {
  const box = el('section');
  box.append(el('h3', '', title), ...children);
  return box;
}
function render(item) {
  panel.replaceChildren();
  const head = el('div', 'panel-head');
  const close = el('button', 'close', 'Close (Esc)');
  close.type = 'button';
  close.addEventListener('click', () => select(null));
  const isLive = item.kind === 'live';
  const badge = el('span', 'badge', isLive ? 'live' : 'depth ' + item.depth);
  paint(badge, isLive ? 'live' : item.depth);
  head.append(badge, el('h2', '', isLive ? 'Live history' : 'Batch'), el('code', '', isLive ? '' : item.label), close);
  const count = isLive ? item.messages + ' messages, seq ' + item.firstSeq + '..' + item.lastSeq + ' (' + data.live.messages + ' live in all)' : item.count + ' ' + unit(item);
  const meta = el('div', 'meta', span(item) + ' UTC · ' + count);
  if (!isLive && item.sessions.length > 0) meta.append(' · ' + sessions(item.sessions));
  if (!isLive && item.parent) meta.append(' · covered by ', link(item.parent, () => select(byLabel.get(item.parent))));
  panel.append(head, meta);
  const columns = el('div', 'columns');
  if (isLive) {
    const outputs = el('div', 'scroll');
    outputs.append(...data.live.clearedOutputs.map(messageView));
    columns.append(section('Not archived yet', el('p', '', 'These messages are still in the live history: memfold context shows them.')),
      section('Cleared tool outputs (' + data.live.clearedOutputs.length + ')', outputs));
  } else {
    const summary = splitSummary(item.summary);
    // A zero-width space after each field of the header lets it wrap between fields rather than inside one.
    const header = el('div', 'summary-header mono', summary.header.split('|').join('|\u200b'));
    const left = section('Summary', header, el('div', 'summary scroll', summary.body));
    const list = el('div', 'scroll transcript');
    if (item.depth > 0) list.append(...item.children.map((l) => childView(byLabel.get(l))));
    else list.append(...item.transcript.map(messageView));
    const title = item.depth > 0 ? 'Covers (' + item.children.length + ' batches)' : 'Transcript (' + item.transcript.length + ' messages)';
    columns.append(left, section(title, list));
  }
  panel.append(columns);
}
function select(item) {
  for (const box of document.querySelectorAll('.box.selected, .box.related')) box.classList.remove('selected', 'related');
  selected = item;
  panel.hidden = !item;
  if (!item) return;
  const box = boxes.get(item);
  box.classList.add('selected');
  const related = [item.parent, ...(item.children || [])].map((l) => boxes.get(byLabel.get(l))).filter(Boolean);
  for (const r of related) r.classList.add('related');
  box.scrollIntoView({ block: 'nearest', inline: 'center' });
  render(item);
}

document.addEventListener('keydown', (event) => {
  if (event.key === 'Escape') select(null);
  if (!selected || selected.kind === 'live' || (event.key !== 'ArrowLeft' && event.key !== 'ArrowRight')) return;
  const lane = data.batches.filter((b) => b.depth === selected.depth);
  const next = lane[lane.indexOf(selected) + (event.key === 'ArrowLeft' ? -1 : 1)];
  if (next) select(next);
});
document.getElementById('zoom-in').addEventListener('click', () => { zoom *= 1.5; layout(); });
document.getElementById('zoom-out').addEventListener('click', () => { zoom = Math.max(1, zoom / 1.5); layout(); });
document.getElementById('zoom-fit').addEventListener('click', () => { zoom = 1; layout(); });
window.addEventListener('resize', layout);
drawLanes();
layout();
`;
