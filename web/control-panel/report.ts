// The printable after-event report of a room: totals and charts per minute (arrivals and admissions, the
// waiting line, active sessions, wait percentiles, the turn estimate's error) from its history on the server.
//
// The control panel opens this page (Charts → After-event report) and sends it the report it read with its own
// credentials: the page asks its opener when it is ready (postMessage, this origin only) and never holds a
// credential. Opened on its own it says where to open it from. Print CSS in report.css.

import './report.css';
import uPlot from 'uplot';
import 'uplot/dist/uPlot.min.css';
import type { ReportMinute, ReportTotals } from '../../src/domain/room-report.ts';
import { element, formatNumber, h, setNotice } from './dom.ts';
import { REPORT_READY } from './report-protocol.ts';

/** What the panel sends: the answer of GET /private/rooms/{id}/report. */
export interface ReportMessage {
  type: 'anteroom-report';
  report: { event_id: string; from: number; to: number; totals: ReportTotals; minutes: ReportMinute[] };
}

const HEIGHT = 200;
/** The charts' width on paper (A4 portrait less 15 mm margins, in CSS pixels). */
const PRINT_WIDTH = 680;

const status = element('report-status');
const printButton = element<HTMLButtonElement>('print');

const dateTime = new Intl.DateTimeFormat(undefined, { dateStyle: 'medium', timeStyle: 'short' });
const clock = new Intl.DateTimeFormat(undefined, { hour: '2-digit', minute: '2-digit' });
const dayClock = new Intl.DateTimeFormat(undefined, { month: 'short', day: 'numeric', hour: '2-digit', minute: '2-digit' });
const zone = new Intl.DateTimeFormat(undefined, { timeZoneName: 'short' }).formatToParts(new Date()).find((p) => p.type === 'timeZoneName')?.value ?? '';

/** A duration in seconds as people read it: "45 s", "12 min 5 s", "2 h 10 min"; "–" when unknown. */
export function duration(seconds: number | null | undefined): string {
  if (seconds === null || seconds === undefined) return '–';
  if (seconds < 60) return `${seconds} s`;
  if (seconds < 3600) return `${Math.floor(seconds / 60)} min${seconds % 60 ? ` ${seconds % 60} s` : ''}`;
  const minutes = Math.round((seconds % 3600) / 60);
  return `${Math.floor(seconds / 3600)} h${minutes ? ` ${minutes} min` : ''}`;
}

function renderTotals(totals: ReportTotals): void {
  const at = totals.peak_waiting_minute === null ? '' : ` (${clock.format(totals.peak_waiting_minute * 1000)})`;
  const rows: [string, string][] = [
    ['Arrivals', formatNumber(totals.arrivals)],
    ['Let in', formatNumber(totals.admissions)],
    ['Tokens claimed', formatNumber(totals.claims)],
    ['Left the line', formatNumber(totals.leaves)],
    ['Completed', formatNumber(totals.completions)],
    ['Abandoned', formatNumber(totals.abandons)],
    ['Places expired', formatNumber(totals.expiries)],
    ['Most waiting', `${formatNumber(totals.peak_waiting)}${at}`],
    ['Most active sessions', formatNumber(totals.peak_active_sessions)],
    ['Most in the pre-queue', formatNumber(totals.peak_prequeue ?? 0)],
    ['Most absent while waiting', formatNumber(totals.peak_absent_waiting ?? 0)],
    ['Most no-shows', formatNumber(totals.peak_no_shows ?? 0)],
    ['Late arrivals', formatNumber(totals.late_arrivals ?? 0)],
    ['Waits measured', formatNumber(totals.waits_measured)],
    ['Median wait', duration(totals.wait_p50_s)],
    ['90th percentile wait', duration(totals.wait_p90_s)],
    ['99th percentile wait', duration(totals.wait_p99_s)],
    ['Estimates judged', formatNumber(totals.estimates_judged)],
    ['Median estimate error', duration(totals.estimate_error_p50_s)],
    ['90th percentile estimate error', duration(totals.estimate_error_p90_s)],
  ];
  element('totals').replaceChildren(...rows.map(([term, value]) => h('div', {}, h('dt', {}, term), h('dd', {}, value))));
}

interface Line {
  label: string;
  values: (number | null)[];
  stroke: string;
  fill?: string;
  dash?: number[];
}

const charts: { plot: uPlot; element: HTMLElement }[] = [];
const widthOf = (target: HTMLElement) => Math.max(260, Math.floor(target.getBoundingClientRect().width));

function chart(id: string, times: number[], range: [number, number], lines: Line[], unit: string): void {
  const target = element(id);
  const axis = { stroke: '#1b1f24', grid: { stroke: '#e3e6ea' }, ticks: { stroke: '#c9ced6' } };
  const format = range[1] - range[0] > 86_400 ? dayClock : clock;
  const plot = new uPlot(
    {
      width: widthOf(target),
      height: HEIGHT,
      scales: { x: { time: true, range: () => range }, y: { range: (_u, _min, max) => [0, Math.max(5, (max ?? 0) * 1.1)] } },
      series: [{}, ...lines.map((line) => ({ label: line.label, stroke: line.stroke, width: 2, ...(line.fill ? { fill: line.fill } : {}), ...(line.dash ? { dash: line.dash } : {}) }))],
      axes: [
        { ...axis, space: 80, values: (_u: uPlot, splits: number[]) => splits.map((s) => format.format(s * 1000)) },
        { ...axis, label: unit },
      ],
    },
    [times, ...lines.map((line) => line.values)],
    target,
  );
  charts.push({ plot, element: target });
  const summary = document.getElementById(id.replace('-chart', '-summary'));
  if (summary) {
    summary.textContent = lines
      .map((line) => {
        const known = line.values.filter((v): v is number => v !== null);
        return known.length === 0 ? `${line.label}: no data.` : `${line.label}: highest ${Math.max(...known)}.`;
      })
      .join(' ');
  }
}

function render(report: ReportMessage['report']): void {
  document.title = `After-event report · ${report.event_id} · Anteroom`;
  element('report-title').textContent = `After-event report: room ${report.event_id}`;
  element('report-range').textContent = `${dateTime.format(report.from * 1000)} – ${dateTime.format(report.to * 1000)}${zone ? ` (${zone})` : ''} · ${report.minutes.length} minutes on record`;
  renderTotals(report.totals);
  const body = element('report-body');
  body.hidden = false;
  for (const { plot } of charts.splice(0)) plot.destroy();
  const m = report.minutes;
  const times = m.map((row) => row.minute);
  const range: [number, number] = [report.from, Math.max(report.to, report.from + 60)];
  chart('flow-chart', times, range, [
    { label: 'Arrivals', values: m.map((r) => r.arrivals), stroke: '#0b5cad' },
    { label: 'Let in', values: m.map((r) => r.admissions), stroke: '#1a6b32', dash: [6, 3] },
  ], 'people / min');
  chart('waiting-chart', times, range, [
    { label: 'Waiting', values: m.map((r) => r.waiting), stroke: '#0b5cad', fill: 'rgba(11, 92, 173, 0.08)' },
    { label: 'Pre-queue', values: m.map((r) => r.prequeue ?? 0), stroke: '#6b3fa0', dash: [2, 3] },
    { label: 'Absent (of those waiting)', values: m.map((r) => r.absent_waiting ?? 0), stroke: '#8a8f98', dash: [1, 3] },
    { label: 'No-shows', values: m.map((r) => r.no_shows ?? 0), stroke: '#a0162b', dash: [4, 3] },
    { label: 'Late arrivals (per min)', values: m.map((r) => r.late_arrivals ?? 0), stroke: '#b3470a', dash: [6, 3] },
  ], 'people');
  chart('active-chart', times, range, [{ label: 'Active sessions', values: m.map((r) => r.active_sessions), stroke: '#6b3fa0', fill: 'rgba(107, 63, 160, 0.08)' }], 'sessions');
  chart('wait-chart', times, range, [
    { label: 'p50', values: m.map((r) => r.wait_p50_s), stroke: '#1a6b32' },
    { label: 'p90', values: m.map((r) => r.wait_p90_s), stroke: '#b3470a' },
    { label: 'p99', values: m.map((r) => r.wait_p99_s), stroke: '#a0162b', dash: [4, 3] },
  ], 'seconds');
  chart('error-chart', times, range, [
    { label: 'p50', values: m.map((r) => r.estimate_error_p50_s), stroke: '#1a6b32' },
    { label: 'p90', values: m.map((r) => r.estimate_error_p90_s), stroke: '#b3470a' },
  ], 'seconds');
  setNotice(status, '', 'info');
  printButton.disabled = false;
  body.dataset.rendered = 'true';
}

function resizeAll(width?: number): void {
  for (const { plot, element: target } of charts) plot.setSize({ width: width ?? widthOf(target), height: HEIGHT });
}

window.addEventListener('message', (event: MessageEvent) => {
  if (event.origin !== location.origin || event.source !== window.opener) return;
  const data = event.data as { type?: string; report?: ReportMessage['report']; error?: string };
  if (data.type === 'anteroom-report' && data.report) render(data.report);
  else if (data.type === 'anteroom-report-error') setNotice(status, `The report could not be read — ${data.error ?? 'unknown error'}`, 'error');
});
printButton.addEventListener('click', () => window.print());
window.addEventListener('beforeprint', () => resizeAll(PRINT_WIDTH));
window.addEventListener('afterprint', () => resizeAll());
new ResizeObserver(() => resizeAll()).observe(element('report-body'));

if (window.opener) (window.opener as Window).postMessage({ type: REPORT_READY }, location.origin);
else setNotice(status, 'Open this page from the control panel (Charts → After-event report): it sends the room\'s history here.', 'warn');
