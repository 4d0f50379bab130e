// One thing per Lambda execution environment (a runtime, an SDK client), built on the first invocation that
// needs it.

/**
 * A value built on first use and kept for the life of the execution environment; a failed build is not
 * kept, so the next invocation tries again (e.g. Redis was briefly unreachable at cold start).
 */
export function once<T>(build: () => Promise<T>): () => Promise<T> {
  let value: Promise<T> | undefined;
  return () => {
    if (!value) {
      value = build();
      value.catch(() => {
        value = undefined;
      });
    }
    return value;
  };
}
