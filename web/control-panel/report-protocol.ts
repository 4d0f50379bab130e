// The report page (report.ts) and the panel (main.ts) talk by postMessage, this origin only: the page says it
// is ready, the panel answers with the report it read (its credentials never leave the panel).

export const REPORT_READY = 'anteroom-report-ready';
