// The templates' names: VWR's, so its documentation and deployment scripts still apply.

export const TEMPLATE_NAMES = {
  core: 'virtual-waiting-room-on-aws',
  gettingStarted: 'virtual-waiting-room-on-aws-getting-started',
  authorizers: 'virtual-waiting-room-on-aws-authorizers',
  openid: 'virtual-waiting-room-on-aws-openid',
  inlet: 'virtual-waiting-room-on-aws-sample-inlet-strategy',
  sample: 'virtual-waiting-room-on-aws-sample',
  cwLogsRole: 'virtual-waiting-room-on-aws-api-gateway-cw-logs-role',
} as const;

