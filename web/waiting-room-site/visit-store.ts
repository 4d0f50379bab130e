// Keeps the visitor's place (their request ID) in localStorage, so a reload, a restored tab or a browser restart
// keeps it. The key names the waiting room (public API URL + event), so two rooms never share a place. The
// request ID is the visitor's own bearer secret for their place, which is what localStorage is for; tokens are
// not stored (generate_token hands the same set out again).

export interface Receipt {
  result: string;
  order: string;
  position?: number;
}

export interface Visit {
  requestId: string;
  /** Epoch ms when the visitor pressed Reserve. */
  joinedAt: number;
  /** Once known, so a reload shows it at once. */
  position?: number;
  /** The room's generation (resets so far) when the place was known: another one means the queue restarted. */
  generation?: number;
  /** After the purchase, so a reload shows the receipt rather than offering to buy again. */
  receipt?: Receipt;
}

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

export class VisitStore {
  readonly key: string;
  private readonly storage: Storage | undefined;
  /** Used when storage is unavailable (some private modes): the place then lasts as long as the page. */
  private memory: string | null = null;

  constructor(publicApiUrl: string, eventId: string, storage: Storage | undefined = safeLocalStorage()) {
    this.key = `anteroom.visit:${publicApiUrl}#${eventId}`;
    this.storage = storage;
  }

  load(): Visit | undefined {
    let raw: string | null = this.memory;
    try {
      raw = this.storage?.getItem(this.key) ?? this.memory;
    } catch {
      // Storage refused: keep the in-memory copy.
    }
    if (!raw) return undefined;
    try {
      const visit = JSON.parse(raw) as Partial<Visit>;
      if (typeof visit.requestId !== 'string' || !UUID.test(visit.requestId)) return undefined;
      return {
        requestId: visit.requestId,
        joinedAt: typeof visit.joinedAt === 'number' ? visit.joinedAt : Date.now(),
        ...(typeof visit.position === 'number' ? { position: visit.position } : {}),
        ...(typeof visit.generation === 'number' ? { generation: visit.generation } : {}),
        ...(isReceipt(visit.receipt) ? { receipt: visit.receipt } : {}),
      };
    } catch {
      return undefined;
    }
  }

  save(visit: Visit): void {
    this.memory = JSON.stringify(visit);
    try {
      this.storage?.setItem(this.key, this.memory);
    } catch {
      // Quota or privacy mode: the in-memory copy still serves this page.
    }
  }

  clear(): void {
    this.memory = null;
    try {
      this.storage?.removeItem(this.key);
    } catch {
      // Nothing to do.
    }
  }
}

function isReceipt(value: unknown): value is Receipt {
  const r = value as Partial<Receipt> | undefined;
  return typeof r === 'object' && r !== null && typeof r.result === 'string' && typeof r.order === 'string';
}

function safeLocalStorage(): Storage | undefined {
  try {
    return globalThis.localStorage;
  } catch {
    return undefined;
  }
}
