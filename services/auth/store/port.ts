// The auth service's own storage port. Two adapters implement it: NeDB files
// under DATA_DIR (embedded default) and MongoDB (full stack); both pass
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

export interface AuthStore {
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

  close(): Promise<void>;
}

export const byCreatedThenId = (a: { created: Date; id: string }, b: { created: Date; id: string }) =>
  a.created.getTime() - b.created.getTime() || (a.id < b.id ? -1 : a.id > b.id ? 1 : 0);
