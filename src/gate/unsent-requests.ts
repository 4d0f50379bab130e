// A queued visitor's request that does something (a form's POST, an API call's PUT/PATCH/DELETE) is never
// silently lost (docs/gate.md, "A request that was not sent"). The gate does not send it to the site, and says
// so: a browser gets the waiting page with a notice that the form was not sent, every other client 503 with
// Retry-After and the queue state in JSON. Either way the visitor's place is taken or kept as for a GET. A
// visitor whose turn has come at that very request has it sent on to the site, body and all.

/** Seconds an API client is told to wait before sending its request again (the waiting page polls every 2 s). */
export const UNSENT_RETRY_AFTER_SEC = 5;

/** The message of the JSON answer, in the project's error shape (`error`). */
export const UNSENT_MESSAGE = 'Not sent to the site: you are in the waiting room. Send the request again once admitted.';

/** Methods a redirect would lose: anything but GET, HEAD and OPTIONS (they carry something to do). */
export function carriesAction(method: string): boolean {
  return method !== 'GET' && method !== 'HEAD' && method !== 'OPTIONS';
}

/** A browser navigating (a form) asks for HTML; fetch, API clients and tools without `text/html` get JSON. */
export function wantsPage(accept: string | undefined): boolean {
  return accept !== undefined && accept.includes('text/html');
}
