import js from '@eslint/js';
import tseslint from 'typescript-eslint';

// The layers of src/ (docs/architecture.md, "Layers"): which top-level folders each folder may import from.
// The domain is the core: it imports nothing of src/ outside itself, no framework and no adapter. Adapters
// depend on the domain (its ports), never the other way round. Composition roots (src/app.ts, src/compose/,
// src/cli/, src/aws/) may import anything. A wrong-way import fails `npm run lint` (and test/architecture).
const FOLDERS = [
  'app.ts', 'aws', 'cdn', 'cli', 'client', 'compose', 'config', 'domain', 'events', 'gate', 'http',
  'inlet', 'jobs', 'loadtest', 'observability', 'oidc', 'pow', 'store', 'tokens', 'web',
];
export const LAYERS = {
  domain: [],
  client: [],
  store: ['domain'],
  tokens: ['domain'],
  pow: ['domain'],
  events: ['domain'],
  jobs: ['domain'],
  config: ['domain'],
  observability: ['domain'],
  cdn: ['domain'],
  inlet: ['domain', 'client', 'http', 'jobs', 'observability'],
  http: ['domain', 'events', 'observability'],
  oidc: ['domain', 'http'],
  web: ['domain', 'http', 'config'],
  gate: ['domain', 'web'],
  loadtest: ['domain', 'client'],
};
/** Packages the domain may use: pure libraries, no framework, no I/O client. */
const DOMAIN_PACKAGES = ['@sinclair/typebox'];

const layerRules = Object.entries(LAYERS).map(([folder, allowed]) => {
  const forbidden = FOLDERS.filter((f) => f !== folder && !allowed.includes(f)).map((f) => f.replace('.', '\\.'));
  const patterns = [
    {
      regex: `^(\\.\\./)+(${forbidden.join('|')})(/|$)`,
      message: `src/${folder} may import only from ${allowed.length ? allowed.map((a) => `src/${a}`).join(', ') : 'itself'} (layers: docs/architecture.md).`,
    },
  ];
  if (folder === 'domain') {
    patterns.push({
      regex: `^(?!node:|\\.|${DOMAIN_PACKAGES.map((p) => p.replace('/', '\\/')).join('|')})`,
      message: 'The domain uses no framework or I/O package: only node: built-ins and pure libraries (typebox).',
    });
  }
  return {
    files: [`src/${folder}/**/*.ts`],
    rules: { '@typescript-eslint/no-restricted-imports': ['error', { patterns }] },
  };
});

// The authorizer package (packages/authorizer, published as `anteroom-authorizer`) is what a protected site
// installs: it depends on jose only (framework types come in as `import type`, erased at build time).
const authorizerPackageRule = {
  files: ['packages/authorizer/src/**/*.ts'],
  rules: {
    '@typescript-eslint/no-restricted-imports': ['error', {
      patterns: [{
        regex: '^(?!node:|\\./|jose$|fastify$)',
        message: 'anteroom-authorizer depends on jose only (and node: built-ins, fastify types): it is installed on its own by a protected site.',
        allowTypeImports: false,
      }, {
        regex: '^fastify$',
        message: 'anteroom-authorizer takes only types from fastify (an optional peer dependency).',
        allowTypeImports: true,
      }],
    }],
  },
};

export default tseslint.config(
  { ignores: ['node_modules/', 'dist/', 'data/', 'web/dist/', 'deploy/aws/cdk.out/', 'deploy/aws/dist/', 'packages/*/dist/', '.stryker-tmp/', 'reports/'] },
  js.configs.recommended,
  ...tseslint.configs.recommended,
  {
    rules: {
      '@typescript-eslint/no-unused-vars': ['error', { argsIgnorePattern: '^_', varsIgnorePattern: '^_' }],
    },
  },
  ...layerRules,
  authorizerPackageRule,
);
