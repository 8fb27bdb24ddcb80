// The console is a client of the public REST API like any other: the bearer
// token (kept in sessionStorage, for this tab only) on every call, JSON in and out.
export class ApiError extends Error {
  constructor(
    readonly status: number,
    message: string,
    readonly retryAfter?: number,
  ) {
    super(message);
  }
}

const KEY = "console.token";
export const session = {
  get token(): string | null {
    return sessionStorage.getItem(KEY);
  },
  set(token: string, scope: "full" | "read", project?: string): void {
    sessionStorage.setItem(KEY, token);
    sessionStorage.setItem(`${KEY}.scope`, scope);
    if (project) sessionStorage.setItem(`${KEY}.project`, project);
    else sessionStorage.removeItem(`${KEY}.project`);
  },
  get scope(): "full" | "read" {
    return sessionStorage.getItem(`${KEY}.scope`) === "full" ? "full" : "read";
  },
  get project(): string | null {
    return sessionStorage.getItem(`${KEY}.project`);
  },
  clear(): void {
    sessionStorage.removeItem(KEY);
    sessionStorage.removeItem(`${KEY}.scope`);
    sessionStorage.removeItem(`${KEY}.project`);
  },
};

/** Called on any 401: the shell goes back to sign-in with a message. */
let onUnauthorized: (message: string) => void = () => undefined;
export const setUnauthorizedHandler = (fn: (message: string) => void) => (onUnauthorized = fn);

export interface CallOptions {
  token?: string;
  body?: unknown;
  raw?: BodyInit;
  contentType?: string;
  signal?: AbortSignal;
  /** Return the Response itself (streams, audio). */
  response?: boolean;
  /** A 401 is only reported, not a sign-out (the sign-in form's own check). */
  quiet401?: boolean;
}

export async function call<T = any>(method: string, path: string, opts: CallOptions = {}): Promise<T> {
  const token = opts.token ?? session.token;
  const headers: Record<string, string> = { accept: "application/json" };
  if (token) headers.authorization = `Bearer ${token}`;
  let body: BodyInit | undefined = opts.raw;
  if (opts.body !== undefined) {
    body = JSON.stringify(opts.body);
    headers["content-type"] = "application/json";
  }
  if (opts.contentType) headers["content-type"] = opts.contentType;
  let res: Response;
  try {
    res = await fetch(path, { method, headers, body, signal: opts.signal, credentials: "omit", cache: "no-store" });
  } catch (e) {
    if ((e as Error).name === "AbortError") throw e;
    throw new ApiError(0, (e as Error).message);
  }
  if (res.ok && opts.response) return res as unknown as T;
  const text = await res.text();
  let json: any;
  try {
    json = text ? JSON.parse(text) : undefined;
  } catch {
    json = undefined;
  }
  if (res.ok) return json as T;
  const message: string = json?.message ?? `HTTP ${res.status}`;
  if (res.status === 401 && !opts.quiet401) onUnauthorized(message);
  const ra = res.headers.get("retry-after");
  throw new ApiError(res.status, message, ra ? Number(ra) || 1 : undefined);
}

export interface TokenInfo {
  scope: "full" | "read";
  project: string;
}

/** What a token is, asked of the public API (GET /api/token); an unknown token is an ApiError 401, not a sign-out. */
export async function tokenInfo(token: string): Promise<TokenInfo> {
  const r = await call<{ scope: string; project: string }>("GET", "/api/token", { token, quiet401: true });
  // Anything but an explicit "full" is treated as read: a console that hides a control it could have shown is the safe mistake.
  return { scope: r.scope === "full" ? "full" : "read", project: r.project };
}
