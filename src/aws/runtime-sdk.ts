// The AWS SDK v3 clients the Lambda Node.js runtime provides (SQS, CloudWatch, CloudFront): the bundles mark
// @aws-sdk/* external (deploy/aws/build-lambda.ts), so each adapter loads its client package when first
// needed. Here the packages are devDependencies, and the tests pass clients pointed at local endpoints.

/** The `send` of an AWS SDK v3 client: all an adapter uses of it. */
export interface SdkClient {
  send(command: unknown): Promise<unknown>;
}

/**
 * Loads `moduleName` and makes its client (or takes `client`) on the first call, once; a failed load is not
 * kept, so a later call tries again.
 */
export function runtimeSdk<M>(moduleName: string, make: (module: M) => SdkClient, client?: SdkClient): () => Promise<{ module: M; client: SdkClient }> {
  let loaded: Promise<{ module: M; client: SdkClient }> | undefined;
  return () => {
    if (!loaded) {
      loaded = (import(moduleName) as Promise<M>).then((module) => ({ module, client: client ?? make(module) }));
      loaded.catch(() => (loaded = undefined));
    }
    return loaded;
  };
}
