// One table of hostile request paths and the one normalised path each must give (null: refused with 400), for
// every normaliser of the project: the edge's (deploy/nginx/anteroom-edge-core.js, under Node and inside nginx)
// and the gate's (src/gate/normalise-path.ts, test/gate/normalise-path.test.ts). Rules: docs/edge.md "The path that is checked".

export const HOSTILE_PATHS: readonly (readonly [raw: string, normalised: string | null])[] = [
  ['/', '/'],
  ['/shop/cart', '/shop/cart'],
  ['/shop/', '/shop/'],
  // dot segments (RFC 3986 §5.2.4), never above the root
  ['/public/../admin/x', '/admin/x'],
  ['/public/./../admin', '/admin'],
  ['/a/b/..', '/a/'],
  ['/a/.', '/a/'],
  ['/../admin', '/admin'],
  ['/%2e%2e/admin', '/admin'],
  ['/public/%2E%2E/admin', '/admin'],
  ['/public/.%2e/admin', '/admin'],
  // unreserved characters decoded, the rest kept (upper-case hex), no double decoding
  ['/%61dmin', '/admin'],
  ['/%7Euser', '/~user'],
  ['/a%20b', '/a%20b'],
  ['/a%c3%a9', '/a%C3%A9'],
  ['/a%c3%a9/x', '/a%C3%A9/x'],
  // merged slashes
  ['//admin', '/admin'],
  ['/public//../admin', '/admin'],
  // refused: encoded separators and controls, malformed escapes, backslashes
  ['/admin%2Fx', null],
  ['/admin%2fx', null],
  ['/public/..%2Fadmin', null],
  ['/public%5C..%5Cadmin', null],
  ['/a%00b', null],
  ['/a%0Ab', null],
  ['/a%7Fb', null],
  ['/a%zz', null],
  ['/a%2', null],
  ['/a%', null],
  ['/public\\..\\admin', null],
  // refused: double encoding (an origin decoding twice would read ..), dot segments with ; parameters
  ['/a%252e%252e/admin', null],
  ['/a%252Fadmin', null],
  ['/public/..;/admin', null],
  ['/public/.;x/admin', null],
  ['admin', null],
  ['*', null],
  ['http://other.test/admin', null],
];
