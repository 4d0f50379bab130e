// A certificate authority of the test's own and a server certificate for 127.0.0.1 signed by it, made with
// openssl in `dir`: ca.pem (to trust, e.g. through NODE_EXTRA_CA_CERTS), server.pem and server.key (for
// redis-server's TLS port). Valid for one day.

import { execFileSync } from 'node:child_process';

export function makeCertificates(dir: string, caName = 'anteroom-test-ca'): void {
  const run = (...args: string[]) => execFileSync('openssl', args, { cwd: dir, stdio: 'ignore' });
  run('req', '-x509', '-newkey', 'rsa:2048', '-nodes', '-keyout', 'ca.key', '-out', 'ca.pem', '-days', '1', '-subj', `/CN=${caName}`);
  run('req', '-newkey', 'rsa:2048', '-nodes', '-keyout', 'server.key', '-out', 'server.csr', '-subj', '/CN=127.0.0.1');
  execFileSync('sh', ['-c', 'printf "subjectAltName=IP:127.0.0.1\\n" > san.ext'], { cwd: dir });
  run('x509', '-req', '-in', 'server.csr', '-CA', 'ca.pem', '-CAkey', 'ca.key', '-CAcreateserial', '-out', 'server.pem', '-days', '1', '-extfile', 'san.ext');
}
