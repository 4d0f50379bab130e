// The AWS SDK v3 clients the Lambda Node.js runtime provides (SQS, CloudWatch, CloudFront): the bundles mark
// @aws-sdk/* external (deploy/aws/build-lambda.ts), so each adapter loads its client package when first
// needed. Here the packages are devDependencies, and the tests pass clients pointed at local endpoints.

import { once } from './once.ts';

/** The `send` of an AWS SDK v3 client: all an adapter uses of it. */
export interface SdkClient {
  send(command: unknown): Promise<unknown>;
}

/** Loads `moduleName` and makes its client (or takes `client`) on the first call; a failed load is tried again. */
export function runtimeSdk<M>(moduleName: string, make: (module: M) => SdkClient, client?: SdkClient): () => Promise<{ module: M; client: SdkClient }> {
  return once(async () => {
    const module = (await import(moduleName)) as M;
    return { module, client: client ?? make(module) };
  });
}
