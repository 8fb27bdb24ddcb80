// What admission needs to know about a project, from the auth service (which
// owns projects). Reads are cached briefly: a create burst must not become a
// settings-read burst. Reservations and refunds are never cached.
import type { Client } from "@connectrpc/connect";
import { ReservationOutcome, type AuthService, type ReserveAudificationResponse } from "../../../gen/auth/v1/auth_pb.js";
import { groupCommit } from "../../../lib/group-commit.js";
import { DEFAULT_SETTINGS, type ProjectRules, type ProjectSettings } from "../../../lib/project-settings.js";

/** Settings as admission reads them; the shape is shared with the auth service. */
export type RulesView = ProjectRules;
export type SettingsView = ProjectSettings;

/** `debited`: the balance is bounded, so the characters were taken and are refundable. */
export type Reservation = { outcome: "reserved"; debited: boolean } | { outcome: "limit_reached" | "no_money" };

export interface ProjectSettingsSource {
  get(projectId: string): Promise<SettingsView>;
  /** Counts one article today (UTC) and debits `chars`, atomically. */
  reserve(projectId: string, chars: number, now?: Date): Promise<Reservation>;
  /** reserve() without counting the article against the daily limit: renders a listener started (their own budget, docs/player.md). Absent: reserve(). */
  reserveOutsideDailyLimit?(projectId: string, chars: number, now?: Date): Promise<Reservation>;
  refund(projectId: string, chars: number): Promise<void>;
  /** Every project's id (the periodic recrawl asks each for its settings); absent: no project can enable recrawl. */
  projects?(): Promise<string[]>;
}

/** Defaults: unlimited, no rules (what a project without settings gets). */
export const UNBOUNDED: SettingsView = DEFAULT_SETTINGS;

/** No auth service to ask: every project unlimited, no rules (tests of the plain lifecycle). */
export const unboundedSettings = (): ProjectSettingsSource => ({
  get: async () => UNBOUNDED,
  reserve: async () => ({ outcome: "reserved", debited: false }),
  refund: async () => {},
});

function reservationOf(r: ReserveAudificationResponse): Reservation {
  if (r.outcome === ReservationOutcome.RESERVED) return { outcome: "reserved", debited: r.creditChars !== undefined };
  return { outcome: r.outcome === ReservationOutcome.NO_MONEY ? "no_money" : "limit_reached" };
}

/** `auth` must send the internal token. */
export function authSettingsSource(auth: Client<typeof AuthService>, ttlMs = 2_000): ProjectSettingsSource {
  const cache = new Map<string, { value: Promise<SettingsView>; expires: number }>();
  // Creates of one project that arrive while its reservation is on the way go
  // to auth as one call, in arrival order (auth takes them in one write when
  // all fit). Keyed by "<project> <day>[ outside]": one batch, one day, one kind (project ids hold no spaces).
  // The creates of one CreateArticles call reach here in one turn: they share the first call.
  const batches = groupCommit(async (key: string, chars: number[]): Promise<Reservation[]> => {
    const [projectId, day, outside] = key.split(" ");
    const r = await auth.reserveAudifications({ projectId, day, chars: chars.map(BigInt), outsideDailyLimit: outside === "outside" });
    return r.results.map(reservationOf);
  }, { maxBatch: 256, gatherTurn: true });
  return {
    get(projectId) {
      const now = Date.now();
      const hit = cache.get(projectId);
      if (hit && hit.expires > now) return hit.value;
      const value = auth.getProjectSettings({ projectId }).then((r) => ({ ...UNBOUNDED, ...(JSON.parse(r.settings?.settingsJson ?? "{}") as Partial<SettingsView>) }));
      // A failed read is not cached: the next caller asks again.
      value.catch(() => cache.delete(projectId));
      if (cache.size > 10_000) cache.clear();
      cache.set(projectId, { value, expires: now + ttlMs });
      return value;
    },
    reserve(projectId, chars, now = new Date()) {
      return batches(`${projectId} ${now.toISOString().slice(0, 10)}`, chars);
    },
    reserveOutsideDailyLimit(projectId, chars, now = new Date()) {
      return batches(`${projectId} ${now.toISOString().slice(0, 10)} outside`, chars);
    },
    async refund(projectId, chars) {
      if (chars > 0) await auth.refundAudification({ projectId, chars: BigInt(chars) });
    },
    async projects() {
      return (await auth.listProjects({})).projects.map((p) => p.id);
    },
  };
}
