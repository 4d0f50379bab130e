// The MaxSize inlet as a transport. The rule and the steps of a report are the domain's
// (src/domain/admission/max-size.ts); here a report is carried out through the private API, as the standalone
// CLI and the Lambda handler do it, and a result is written for logs and CLI lines (the in-server endpoint too).

import { maxSizeAdmission, type MaxSizeReport, type MaxSizeResult } from '../domain/admission/max-size.ts';
import type { PrivateApi } from './private-api.ts';

/** Applies one report through the private API. The caller has checked it with maxSizeReportProblem. */
export function applyMaxSizeReport(
  api: PrivateApi,
  eventId: string,
  maxSize: number,
  report: MaxSizeReport,
): Promise<MaxSizeResult> {
  return maxSizeAdmission(
    {
      closeSession: (requestId, status) => api.updateSession(eventId, requestId, status),
      activeTokens: () => api.numActiveTokens(eventId),
      move: async (by) => {
        // The private API answers the new value only; `by` ≥ 0 here, so the counter was `by` lower before.
        const serving = await api.incrementServingCounter(eventId, by);
        return { previousServing: serving - by, serving };
      },
    },
    maxSize,
    report,
  );
}

export function describeMaxSizeResult(eventId: string, maxSize: number, r: MaxSizeResult): string {
  const active = maxSize - r.capacity;
  const move = r.moved_by > 0 ? `serving counter +${r.moved_by} -> ${r.serving_num}` : `serving counter unchanged at ${r.serving_num}`;
  return `${eventId} max-size: closed ${r.closed} session(s), ${active} active of ${maxSize} (capacity ${r.capacity}), ${move}`;
}
