// What `anteroom serve` adds for people: the waiting-room page, the control panel and the sample store.

import type { FastifyInstance } from 'fastify';
import type { ServerConfig } from '../config/config.ts';
import { DEFAULT_EVENT_ID } from '../domain/room-settings.ts';
import type { RoomSettings } from '../domain/room-settings.ts';
import { PAGE_PATHS, pagesBuilt, staticPages } from './static-pages.ts';
import { previewRoute, waitingPageRenderer } from './waiting-page.ts';
import { SHOP_BASE_PATH, shopApi } from './shop-api.ts';

export { PAGE_PATHS, pagesBuilt, staticPages } from './static-pages.ts';
export { renderWaitingPage, pageVariables, Languages, PAGE_PHASES, type PageInput, type PagePhase } from './page-template.ts';
export { loadPageAssets, previewRoute, waitingPageRenderer } from './waiting-page.ts';
export { SHOP_BASE_PATH, SHOP_OPERATIONS, shopApi } from './shop-api.ts';

/** The pages and the sample store, as plugins for `startNode(config, { plugins })`. */
export function webPlugins(
  config: Pick<ServerConfig, 'events' | 'publicApiKey'>,
  publicUrl: () => string,
  options: { root?: string; clock?: () => number; roomSettings?: (eventId: string) => RoomSettings | undefined } = {},
): ((app: FastifyInstance) => void)[] {
  const waitingPage = waitingPageRenderer({
    ...(options.root ? { root: options.root } : {}),
    ...(options.clock ? { clock: options.clock } : {}),
    roomSettings: options.roomSettings ?? (() => undefined),
  });
  return [
    staticPages({ ...(options.root ? { root: options.root } : {}), ...(waitingPage ? { waitingPage } : {}) }),
    shopApi({
      events: config.events,
      publicUrl,
      publicApiKey: config.publicApiKey,
      ...(options.clock ? { clock: options.clock } : {}),
    }),
  ];
}

/** The private routes of the pages (the preview of a room's page), for `startNode(config, { privatePlugins })`. */
export function webPrivatePlugins(
  roomSettings: (eventId: string) => RoomSettings | undefined,
  options: { root?: string; clock?: () => number } = {},
): ((app: FastifyInstance) => void)[] {
  return [previewRoute({ ...options, roomSettings })];
}

/**
 * Links to the pages, with the URL parameters they need when the server differs from the pages' defaults
 * (event "Sample", private API at /private).
 */
export function pageUrls(
  publicUrl: string,
  config: Pick<ServerConfig, 'events' | 'privateBasePath'>,
): { waitingRoom: string; controlPanel: string; store: string; built: boolean } {
  const eventId = config.events[0]?.event_id ?? DEFAULT_EVENT_ID;
  const visitor = new URLSearchParams();
  if (eventId !== DEFAULT_EVENT_ID) visitor.set('eventId', eventId);
  const operator = new URLSearchParams(visitor);
  if (config.privateBasePath !== '/private') operator.set('privateApiUrl', `${publicUrl}${config.privateBasePath}`);
  const withQuery = (path: string, query: URLSearchParams) => `${publicUrl}${path}${query.size > 0 ? `?${query}` : ''}`;
  return {
    waitingRoom: withQuery(PAGE_PATHS.waitingRoom, visitor),
    controlPanel: withQuery(PAGE_PATHS.controlPanel, operator),
    store: `${publicUrl}${SHOP_BASE_PATH}/checkout`,
    built: pagesBuilt(),
  };
}
