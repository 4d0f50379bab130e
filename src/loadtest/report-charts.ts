// The pieces of the load test's HTML reports (report.ts, no-show-report.ts): SVG line charts with a hover
// read-out, tables, the page's style. Self-contained: no external URL.

export function escapeHtml(text: string): string {
  return text.replace(/[&<>"']/g, (c) => ({ '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' })[c]!);
}

export const fmt = (n: number, digits = 1) => n.toLocaleString('en-US', { maximumFractionDigits: digits });

/** 1234 → "1.2k", 2500000 → "2.5M": axis labels stay short. */
function compact(n: number): string {
  const abs = Math.abs(n);
  if (abs >= 1e6) return `${fmt(n / 1e6)}M`;
  if (abs >= 1e4) return `${fmt(n / 1e3, 0)}k`;
  if (abs >= 1e3) return `${fmt(n / 1e3)}k`;
  return fmt(n, abs < 10 ? 2 : 1);
}

/** A round step so that `max` spans about `count` ticks: 1, 2 or 5 × 10^k. */
function niceStep(max: number, count: number): number {
  const raw = max / count;
  const magnitude = 10 ** Math.floor(Math.log10(raw));
  const residual = raw / magnitude;
  return (residual > 5 ? 10 : residual > 2 ? 5 : residual > 1 ? 2 : 1) * magnitude;
}

export interface Series {
  name: string;
  color: string;
  values: Array<number | null>;
}

const W = 960;
const H = 260;
const M = { left: 64, right: 16, top: 14, bottom: 34 };
const MAX_POINTS = 1500;

export function lineChart(id: string, title: string, unit: string, t: number[], series: Series[], note = ''): string {
  // Long runs: keep at most MAX_POINTS columns (every k-th second) so the file stays small.
  const stride = Math.max(1, Math.ceil(t.length / MAX_POINTS));
  const idx = t.map((_, i) => i).filter((i) => i % stride === 0 || i === t.length - 1);
  const xs = idx.map((i) => t[i]!);
  const ser = series.map((s) => ({ ...s, values: idx.map((i) => s.values[i] ?? null) }));
  const xMax = Math.max(1, xs[xs.length - 1] ?? 1);
  const yData = Math.max(0, ...ser.flatMap((s) => s.values.filter((v): v is number => v !== null)));
  const yStep = niceStep(yData > 0 ? yData : 1, 4);
  const yMax = Math.max(yStep, Math.ceil(yData / yStep) * yStep);
  const pw = W - M.left - M.right;
  const ph = H - M.top - M.bottom;
  const x = (v: number) => M.left + (v / xMax) * pw;
  const y = (v: number) => M.top + ph - (v / yMax) * ph;

  const parts: string[] = [];
  for (let v = 0; v <= yMax + yStep / 2; v += yStep) {
    parts.push(`<line x1="${M.left}" x2="${W - M.right}" y1="${y(v).toFixed(1)}" y2="${y(v).toFixed(1)}" class="grid"/>`);
    parts.push(`<text x="${M.left - 8}" y="${(y(v) + 4).toFixed(1)}" class="ylabel">${compact(v)}</text>`);
  }
  const xStep = niceStep(xMax, 8);
  for (let v = 0; v <= xMax + 1e-9; v += xStep) {
    parts.push(`<text x="${x(v).toFixed(1)}" y="${H - M.bottom + 18}" class="xlabel">${compact(v)} s</text>`);
  }
  for (const s of ser) {
    let d = '';
    let pen = false;
    s.values.forEach((v, i) => {
      if (v === null) {
        pen = false;
        return;
      }
      d += `${pen ? 'L' : 'M'}${x(xs[i]!).toFixed(1)} ${y(v).toFixed(1)}`;
      pen = true;
    });
    if (d) parts.push(`<path d="${d}" stroke="${s.color}" class="line"><title>${escapeHtml(s.name)}</title></path>`);
  }
  const data = { t: xs, unit, series: ser.map((s) => ({ name: s.name, color: s.color, values: s.values })), x0: M.left, pw, xMax };
  const legend = ser.map((s) => `<span class="key"><i style="background:${s.color}"></i>${escapeHtml(s.name)}</span>`).join('');
  return `
<section class="chart" id="${id}">
  <h3>${escapeHtml(title)} <small>${escapeHtml(unit)}</small></h3>
  <div class="legend">${legend}<span class="readout"></span></div>
  <svg viewBox="0 0 ${W} ${H}" role="img" aria-label="${escapeHtml(title)}">
    ${parts.join('\n    ')}
    <line class="cursor" x1="0" x2="0" y1="${M.top}" y2="${H - M.bottom}" visibility="hidden"/>
  </svg>
  ${note ? `<p class="note">${note}</p>` : ''}
  <script type="application/json">${JSON.stringify(data).replace(/</g, '\\u003c')}</script>
</section>`;
}

export const HOVER_SCRIPT = `
for (const section of document.querySelectorAll('section.chart')) {
  const data = JSON.parse(section.querySelector('script[type="application/json"]').textContent);
  const svg = section.querySelector('svg');
  const cursor = svg.querySelector('.cursor');
  const readout = section.querySelector('.readout');
  svg.addEventListener('mousemove', (e) => {
    const box = svg.getBoundingClientRect();
    const vx = ((e.clientX - box.left) / box.width) * svg.viewBox.baseVal.width;
    const tx = ((vx - data.x0) / data.pw) * data.xMax;
    let i = 0;
    while (i < data.t.length - 1 && Math.abs(data.t[i + 1] - tx) < Math.abs(data.t[i] - tx)) i++;
    const px = data.x0 + (data.t[i] / data.xMax) * data.pw;
    cursor.setAttribute('x1', px); cursor.setAttribute('x2', px); cursor.setAttribute('visibility', 'visible');
    readout.textContent = data.t[i].toFixed(0) + ' s: ' + data.series.map((s) => s.name.split(' (')[0] + ' ' +
      (s.values[i] === null ? '–' : Number(s.values[i]).toLocaleString('en-US', { maximumFractionDigits: 2 }))).join(' · ');
  });
  svg.addEventListener('mouseleave', () => { cursor.setAttribute('visibility', 'hidden'); readout.textContent = ''; });
}`;

export const STYLE = `
:root { font-family: system-ui, -apple-system, "Segoe UI", sans-serif; color: #0f172a; background: #f8fafc; }
body { max-width: 1040px; margin: 0 auto; padding: 24px; }
@media (max-width: 600px) { body { padding: 12px; } th, td { padding: 5px 6px; } }
code { overflow-wrap: anywhere; }
.scroll { overflow-x: auto; } .scroll:focus-visible { outline: 2px solid #1d4ed8; }
h1 { font-size: 1.5rem; margin: 0 0 4px; } h2 { font-size: 1.15rem; margin: 32px 0 8px; } h3 { font-size: 1rem; margin: 0 0 4px; }
h3 small { color: #64748b; font-weight: normal; }
.meta { color: #475569; font-size: .9rem; } code { font-size: .85em; background: #e2e8f0; padding: 1px 4px; border-radius: 3px; }
.badge { display: inline-block; padding: 2px 10px; border-radius: 12px; color: white; font-weight: 600; font-size: .9rem; vertical-align: middle; }
.pass { background: #15803d; } .fail { background: #b91c1c; }
.cards { display: grid; grid-template-columns: repeat(auto-fill, minmax(150px, 1fr)); gap: 10px; margin-top: 16px; }
.card { background: white; border: 1px solid #e2e8f0; border-radius: 8px; padding: 10px 12px; }
.card b { display: block; font-size: 1.3rem; } .card span { color: #64748b; font-size: .8rem; }
table { border-collapse: collapse; width: 100%; background: white; font-size: .9rem; }
th, td { text-align: left; padding: 6px 10px; border-bottom: 1px solid #e2e8f0; vertical-align: top; }
td.num, th.num { text-align: right; font-variant-numeric: tabular-nums; }
.chart { background: white; border: 1px solid #e2e8f0; border-radius: 8px; padding: 12px; margin: 12px 0; }
.chart svg { width: 100%; height: auto; display: block; }
.grid { stroke: #e2e8f0; } .line { fill: none; stroke-width: 1.6; } .cursor { stroke: #94a3b8; stroke-dasharray: 3 3; }
.ylabel { font-size: 11px; fill: #64748b; text-anchor: end; } .xlabel { font-size: 11px; fill: #64748b; text-anchor: middle; }
/* A chart is drawn 960 units wide and scaled to the screen: on a phone, larger labels and lines stay legible. */
@media (max-width: 600px) { .ylabel, .xlabel { font-size: 26px; } .line { stroke-width: 3.5; } }
.legend { font-size: .8rem; color: #334155; min-height: 1.2em; } .key { margin-right: 14px; white-space: nowrap; }
.key i { display: inline-block; width: 12px; height: 3px; margin-right: 5px; vertical-align: middle; }
.readout { float: right; color: #0f172a; font-variant-numeric: tabular-nums; }
.note, .help { color: #475569; font-size: .85rem; }
.warning { background: #fef3c7; border: 1px solid #f59e0b; border-radius: 8px; padding: 8px 12px; font-size: .9rem; } .examples { margin: 4px 0 0 18px; padding: 0; color: #7f1d1d; font-size: .85rem; }
`;

export function table(head: string[], rows: string[][], numeric: boolean[] = []): string {
  const th = head.map((h, i) => `<th${numeric[i] ? ' class="num"' : ''}>${h}</th>`).join('');
  const tr = rows.map((r) => `<tr>${r.map((c, i) => `<td${numeric[i] ? ' class="num"' : ''}>${c}</td>`).join('')}</tr>`).join('\n');
  // A wide table scrolls inside its own region (focusable, so the keyboard can scroll it) on a narrow screen.
  return `<div class="scroll" tabindex="0" role="region" aria-label="${escapeHtml(head.filter(Boolean).join(', '))}"><table><thead><tr>${th}</tr></thead><tbody>${tr}</tbody></table></div>`;
}
