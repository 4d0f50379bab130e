// The proof-of-work solver of the waiting-room page (proof-of-work.ts), built on its own as
// waiting-room-site/solver.js for pages that are not built here: the OpenID Connect login page
// (src/oidc/login-page.ts) imports it to solve a room's challenge the same way.
export { PROOF_REFUSALS, solveProofOfWork } from './proof-of-work.ts';
