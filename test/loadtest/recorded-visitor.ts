// A visitor as the load test records one, for the verdict tests: placed at index + 1 and done, unless told otherwise.

import { newVisitor, type Visitor } from '../../src/loadtest/records.ts';

export function visitor(index: number, fields: Partial<Visitor> = {}): Visitor {
  return {
    ...newVisitor(index, 0),
    requestId: `00000000-0000-4000-8000-${String(index).padStart(12, '0')}`,
    position: index + 1,
    state: 'done',
    ...fields,
  };
}
