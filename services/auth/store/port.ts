// The auth service's own storage port. store.ts implements it once over an SQLite
// database under DATA_DIR (embedded default) or MongoDB (full stack); both pass
// test/contract/auth-store.contract.ts.

export type TokenScope = "full" | "read";

export interface ProjectRecord {
  id: string;
  name: string;
  created: Date;
}

/** A token as stored: the plain token itself is never kept, only its hash. */
export interface TokenRecord {
  /** Public identifier, safe to show and log. */
  id: string;
  projectId: string;
  scope: TokenScope;
  /** SHA-256 of the plain token, lowercase hex. */
  hash: string;
  /** First characters of the plain token, so people can tell tokens apart. */
  prefix: string;
  created: Date;
  revoked: Date | null;
}

/** Another token already has this hash (the same plain token). */
export class DuplicateTokenError extends Error {
  constructor() {
    super("a token with the same value already exists");
    this.name = "DuplicateTokenError";
  }
}

/** Settings and counters of one project as stored (see services/auth/settings.ts for the document). */
export interface ProjectState {
  /** Everything but creditChars; undefined until an admin first changes something. */
  settings: Record<string, unknown> | undefined;
  /** Remaining balance; null = unlimited. */
  creditChars: number | null;
  dailyLimit: number | null;
  usageDay: string;
  usedToday: number;
}

export type ReserveOutcome =
  | { ok: true; creditChars: number | null; usedToday: number }
  | { ok: false; reason: "limit_reached" | "no_money" | "not_found"; creditChars: number | null; usedToday: number };

export type AddCreditOutcome = { ok: true; creditChars: number } | { ok: false; reason: "not_found" | "unlimited" };

/** A project's public player key and player settings (services/auth/player.ts). */
export interface PlayerRecord {
  project: ProjectRecord;
  /** Unset until the project first asks for it. */
  publicKey: string | null;
  /** The stored player settings document; undefined until first changed. */
  settings: Record<string, unknown> | undefined;
}

export type OembedClaimStatus = "pending" | "verified" | "failed";

/** One project's claim on one host for oEmbed (services/auth/oembed-hosts.ts). */
export interface OembedClaim {
  projectId: string;
  /** Normalised: lower case, without :443 or :80. */
  host: string;
  status: OembedClaimStatus;
  /** Why the last check failed (also while still verified within the grace period); null after a success. */
  reason: string | null;
  checkedAt: Date | null;
  /** The last successful check. */
  verifiedAt: Date | null;
  /** First failed check since the last success. */
  failingSince: Date | null;
  /** When the scheduler checks it next (ms since the epoch). */
  nextCheckMs: number;
}

export interface AuthStore {
  getProjectState(id: string): Promise<ProjectState | null>;
  /**
   * Stores the settings document (its creditChars ignored); `creditChars`
   * replaces the balance only when given, so concurrent debits are not lost.
   */
  saveSettings(id: string, settings: Record<string, unknown> & { dailyLimit: number | null }, creditChars?: number | null): Promise<ProjectState | null>;
  /** Atomic: only a bounded balance grows. */
  addCredit(id: string, chars: number): Promise<AddCreditOutcome>;
  /**
   * Atomic, race-safe: counts one article on `day` (UTC YYYY-MM-DD) if the
   * daily limit allows it AND debits `chars` if the balance covers it; else
   * changes nothing and names the bound that refused (the limit first).
   */
  reserve(id: string, day: string, chars: number): Promise<ReserveOutcome>;
  /**
   * reserve() for several articles, in order, each reserved or refused on its own; one write when all fit.
   * `counted` false: the characters only, the daily limit neither counts nor refuses them (on-demand renders a listener started).
   */
  reserveMany(id: string, day: string, chars: number[], counted?: boolean): Promise<ReserveOutcome[]>;
  /** Gives characters back to a bounded balance; returns the new balance (null = unlimited or no project). */
  refund(id: string, chars: number): Promise<number | null>;

  /**
   * Creates the project unless one with this id exists. Never overwrites:
   * `created` tells whether this call made it, `project` is what is stored.
   */
  createProject(p: { id: string; name: string; created?: Date }): Promise<{ project: ProjectRecord; created: boolean }>;
  getProject(id: string): Promise<ProjectRecord | null>;
  /** Oldest first. */
  listProjects(): Promise<ProjectRecord[]>;
  countProjects(): Promise<number>;

  /** Throws DuplicateTokenError when the hash is already stored. */
  insertToken(t: TokenRecord): Promise<void>;
  /** Any token with this hash, revoked or not. */
  findTokenByHash(hash: string): Promise<TokenRecord | null>;
  findActiveTokenByHash(hash: string): Promise<TokenRecord | null>;
  /** Oldest first, revoked ones included. */
  listTokens(projectId: string): Promise<TokenRecord[]>;
  /**
   * Marks the token revoked and returns it; revoking twice keeps the first
   * revocation time. Null when there is no such token.
   */
  revokeToken(id: string, at?: Date): Promise<TokenRecord | null>;

  getPlayer(projectId: string): Promise<PlayerRecord | null>;
  /**
   * Atomic compare-and-set of the public key: applies only while the stored
   * key is still `expected` (null: none yet), so two first readers or two
   * rotations agree on one key. False when the condition failed.
   */
  swapPublicKey(projectId: string, expected: string | null, next: string): Promise<boolean>;
  findPlayerByPublicKey(publicKey: string): Promise<PlayerRecord | null>;
  savePlayerSettings(projectId: string, settings: Record<string, unknown>): Promise<PlayerRecord | null>;

  /** The project's oEmbed host claims with their verification state, by host. */
  listOembedClaims(projectId: string): Promise<OembedClaim[]>;
  /** Adds a pending claim unless the project already claims the host; keeps an existing one as it is. */
  addOembedClaim(projectId: string, host: string, nextCheckMs: number): Promise<void>;
  /** Deletes the project's claims on hosts not in `keep` (which frees a host it had verified). */
  removeOembedClaims(projectId: string, keep: string[]): Promise<void>;
  /**
   * Stores the outcome of a check. A verified claim takes the host's one
   * verified slot atomically (a unique index): "taken" when another project
   * holds it (nothing written), "gone" when the claim no longer exists.
   */
  saveOembedCheck(claim: OembedClaim): Promise<"saved" | "taken" | "gone">;
  /** The claim verified for `host` (normalised), if any. */
  findVerifiedOembedClaim(host: string): Promise<OembedClaim | null>;
  /** Claims whose next check is due at `nowMs`, most overdue first. */
  dueOembedClaims(nowMs: number, limit: number): Promise<OembedClaim[]>;
  /**
   * Atomic: moves the claim's next check from `seenMs` to `untilMs`. Only one
   * caller (of all replicas) wins a due claim; false for the others.
   */
  leaseOembedCheck(projectId: string, host: string, seenMs: number, untilMs: number): Promise<boolean>;

  /**
   * Grows whenever reads may see a new write of a project or token (what deciding who a caller
   * is reads); absent where this process does not make every write (DocumentCollection.changes).
   */
  changes?(): number;
  close(): Promise<void>;
}

export const byCreatedThenId = (a: { created: Date; id: string }, b: { created: Date; id: string }) =>
  a.created.getTime() - b.created.getTime() || (a.id < b.id ? -1 : a.id > b.id ? 1 : 0);
