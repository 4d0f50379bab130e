// cdk-nag's AWS Solutions rules over the synthesised stacks (deploy/aws/nag.ts): every finding is fixed or
// acknowledged with a reason, no acknowledgement outlives its finding, and the findings fixed stay fixed.

import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { ACKNOWLEDGEMENTS, acknowledgementOf, nagFindings, type NagFinding } from '../../deploy/aws/nag.ts';
import { TEMPLATE_NAMES } from '../../deploy/aws/templates.ts';

describe('cdk-nag (AwsSolutions) over the stacks', () => {
  const all = nagFindings({ acknowledge: false });
  const open = nagFindings({ acknowledge: true });
  const show = (findings: readonly NagFinding[]) => findings.map((f) => `${f.rule} at ${f.constructPath}`);

  it('leaves no finding open: each is fixed or acknowledged with its reason', () => {
    assert.ok(all.length > 0, 'the checks ran');
    assert.deepEqual(show(open), []);
    assert.deepEqual(show(all.filter((f) => !acknowledgementOf(f))), []);
    for (const ack of ACKNOWLEDGEMENTS) assert.ok(ack.reason.length >= 30, `${ack.id}: a reason, not a word`);
  });

  it('acknowledges nothing that is not found (each acknowledgement, on each of its constructs, covers a finding)', () => {
    for (const ack of ACKNOWLEDGEMENTS) {
      const stack = TEMPLATE_NAMES[ack.stack];
      for (const path of ack.paths ?? [undefined]) {
        const prefix = path === undefined ? `${stack}/` : `${stack}/${path}`;
        const covered = all.some((f) => f.rule === ack.id && (f.constructPath === prefix || f.constructPath.startsWith(path === undefined ? prefix : `${prefix}/`)));
        assert.ok(covered, `${ack.id} on ${prefix} covers nothing`);
      }
    }
  });

  it('keeps the fixed findings fixed: endpoint security groups, token-table index, the inlet\'s stage', () => {
    const fixed = all.filter((f) => /AwsSolutions-EC23|\/index\/\*|:\{"Fn::Select".*\}\/\*\//.test(f.rule));
    assert.deepEqual(show(fixed), []);
  });
});
