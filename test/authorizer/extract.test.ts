import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { extractToken, tokenFromAuthorization } from '../../packages/authorizer/src/index.ts';

const JWT = 'eyJhbGciOiJSUzI1NiJ9.eyJzdWIiOiJ4In0.c2ln';

describe('finding the presented token', () => {
  it('reads Authorization: Bearer <jwt>, whatever the scheme case and spacing', () => {
    assert.equal(extractToken({ authorization: `Bearer ${JWT}` }), JWT);
    assert.equal(extractToken({ authorization: `bearer   ${JWT} ` }), JWT);
  });

  it("reads a raw Authorization: <jwt> (what VWR's sample site sends)", () => {
    assert.equal(extractToken({ authorization: JWT }), JWT);
  });

  it('finds the header whatever its case (API Gateway events keep the client spelling)', () => {
    assert.equal(extractToken({ Authorization: `Bearer ${JWT}` }), JWT);
    assert.equal(extractToken({ AUTHORIZATION: JWT }), JWT);
  });

  it('treats an empty header, a bare "Bearer" and another scheme as no token', () => {
    assert.equal(extractToken({ authorization: '' }), undefined);
    assert.equal(extractToken({ authorization: 'Bearer' }), undefined);
    assert.equal(extractToken({ authorization: 'Bearer ' }), undefined);
    assert.equal(extractToken({ authorization: 'Basic dXNlcjpwYXNz' }), undefined);
    assert.equal(tokenFromAuthorization(undefined), undefined);
    assert.equal(extractToken(undefined), undefined);
  });

  it('reads the configured cookie only when no Authorization header carries a token', () => {
    const cookie = `theme=dark; anteroom_token=${JWT}; other=1`;
    assert.equal(extractToken({ cookie }, { cookieName: 'anteroom_token' }), JWT);
    assert.equal(extractToken({ Cookie: cookie }, { cookieName: 'anteroom_token' }), JWT);
    assert.equal(extractToken({ cookie }), undefined, 'no cookie configured');
    assert.equal(extractToken({ cookie: 'anteroom_token=' }, { cookieName: 'anteroom_token' }), undefined);
    assert.equal(extractToken({ cookie: 'x_anteroom_token=abc' }, { cookieName: 'anteroom_token' }), undefined);
    assert.equal(
      extractToken({ authorization: 'Bearer from-header', cookie }, { cookieName: 'anteroom_token' }),
      'from-header',
    );
  });

  it('takes the first of repeated header values', () => {
    assert.equal(extractToken({ authorization: [JWT, 'second'] }), JWT);
  });
});
