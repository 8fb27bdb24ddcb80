// PlayerService: each project's public player key (pk_…) and player
// settings. The key is made on first use and can be rotated; lookups by key
// are for internal services only (they cache them like tokens).
import { randomBytes } from "node:crypto";
import { create } from "@bufbuild/protobuf";
import { Code, ConnectError, type ServiceImpl } from "@connectrpc/connect";
import { OembedHostSchema, PlayerSchema, type Player, type PlayerService } from "../../gen/auth/v1/player_pb.js";
import type { Logger } from "../../lib/log.js";
import type { ProjectSettings } from "../../lib/project-settings.js";
import { DEFAULT_LANG } from "../../lib/voices.js";
import { createCredentialChecks, type CredentialOptions } from "./credentials.js";
import { createOembedVerifier, type OembedVerifierConfig } from "./oembed-hosts.js";
import { completePlayerSettings, normaliseOembedHost, PlayerSettingsError, storedPlayerSettings, type PlayerSettings } from "./player-settings.js";
import { mergePatch, normalizeStored } from "./settings.js";
import type { OembedClaim, PlayerRecord } from "./store/port.js";
import { PROJECT_ID_PATTERN } from "./tokens.js";

export const PUBLIC_KEY_PREFIX = "pk_";
export const PUBLIC_KEY_PATTERN = /^pk_[A-Za-z0-9_-]{16,64}$/;

export const newPublicKey = () => PUBLIC_KEY_PREFIX + randomBytes(18).toString("base64url");

export interface PlayerServiceOptions extends CredentialOptions {
  log: Logger;
  /** How oEmbed host claims are verified (oembed-hosts.ts); defaults: daily, 72 h grace, public hosts over https only. */
  oembed?: OembedVerifierConfig & { answerBudgetMs?: number };
}

const iso = (d: Date | null) => (d ? d.toISOString() : "");
const hostState = (c: OembedClaim) => create(OembedHostSchema, { host: c.host, status: c.status, reason: c.reason ?? "", checkedAt: iso(c.checkedAt), verifiedAt: iso(c.verifiedAt) });

/** `close` stops the periodic oEmbed host checks. */
export function createPlayerServiceImpl(opts: PlayerServiceOptions): ServiceImpl<typeof PlayerService> & { close(): void } {
  const { store, log } = opts;
  const { requireInternalToken, requireAdmin, requirePublisherToken } = createCredentialChecks(opts);

  const message = (r: PlayerRecord, key: string, extra: { feedLanguage?: string; claims?: OembedClaim[] } = {}): Player =>
    create(PlayerSchema, {
      projectId: r.project.id,
      projectName: r.project.name,
      publicKey: key,
      settingsJson: JSON.stringify(storedPlayerSettings(r.settings)),
      feedLanguage: extra.feedLanguage ?? "",
      oembedHosts: (extra.claims ?? []).map(hostState),
    });

  /** The feed's language as set, else the locale of the project's default voice, else the platform's. */
  async function feedLanguageOf(r: PlayerRecord): Promise<string> {
    const set = storedPlayerSettings(r.settings).feed.language;
    if (set) return set;
    const state = await store.getProjectState(r.project.id);
    return (state && normalizeStored(state.settings as Partial<ProjectSettings> | undefined, state.creditChars).defaultLang) || DEFAULT_LANG;
  }

  /** What publishers are answered: the message with the feed's language and the verification state of each claimed host. */
  async function fullMessage(r: PlayerRecord, key: string): Promise<Player> {
    const [feedLanguage, claims] = await Promise.all([feedLanguageOf(r), verifier.claims(r.project.id, storedPlayerSettings(r.settings).oembed.hosts)]);
    return message(r, key, { feedLanguage, claims });
  }

  async function recordOf(projectId: string): Promise<PlayerRecord> {
    const r = await store.getPlayer(projectId);
    if (!r) throw new ConnectError(`project '${projectId}' not found`, Code.NotFound);
    return r;
  }

  /** The project's key, made now if it never had one; concurrent first readers agree on one. */
  async function keyOf(r: PlayerRecord): Promise<string> {
    if (r.publicKey) return r.publicKey;
    const fresh = newPublicKey();
    if (await store.swapPublicKey(r.project.id, null, fresh)) return fresh;
    return (await recordOf(r.project.id)).publicKey as string;
  }

  const verifier = createOembedVerifier({ store, log, keyOf, ...opts.oembed });
  verifier.start();

  /** For the publisher: with the verification state of each claimed host. */
  async function answer(projectId: string): Promise<{ player: Player }> {
    const r = await recordOf(projectId);
    return { player: await fullMessage(r, await keyOf(r)) };
  }

  /**
   * Validates and stores. Claiming a host blocks nobody: hosts that are not
   * verified yet are checked now (a verified one keeps its schedule).
   */
  async function save(projectId: string, next: unknown): Promise<{ player: Player }> {
    let settings: PlayerSettings;
    try {
      settings = completePlayerSettings(next);
    } catch (e) {
      if (e instanceof PlayerSettingsError) throw new ConnectError(e.message, Code.InvalidArgument);
      throw e;
    }
    const r = await store.savePlayerSettings(projectId, settings as unknown as Record<string, unknown>);
    if (!r) throw new ConnectError(`project '${projectId}' not found`, Code.NotFound);
    log.info({ projectId, feedEnabled: settings.feed.enabled, oembedHosts: settings.oembed.hosts.length }, "player settings changed");
    await verifier.checkNow(r, settings.oembed.hosts, (c) => c.status !== "verified");
    return answer(projectId);
  }

  function parseJson(json: string, field: string): unknown {
    try {
      return JSON.parse(json);
    } catch {
      throw new ConnectError(`${field}: not valid JSON`, Code.InvalidArgument);
    }
  }

  return {
    close: () => verifier.stop(),

    async getPlayer(_req, ctx) {
      // The key itself may ask too: everything answered is public (feed settings, the key).
      const bearer = /^Bearer[ ]+(pk_\S+)\s*$/i.exec(ctx.requestHeader.get("authorization") ?? "")?.[1];
      if (bearer) {
        const r = PUBLIC_KEY_PATTERN.test(bearer) ? await store.findPlayerByPublicKey(bearer) : null;
        if (!r) throw new ConnectError("unknown player key", Code.Unauthenticated);
        // What a key holder may see: the feed's language, not the publisher's oEmbed host checks.
        return { player: message(r, bearer, { feedLanguage: await feedLanguageOf(r) }) };
      }
      const t = await requirePublisherToken(ctx, "read");
      return answer(t.projectId);
    },

    async updatePlayer(req, ctx) {
      const t = await requirePublisherToken(ctx, "full");
      return save(t.projectId, parseJson(req.settingsJson, "settings"));
    },

    async rotatePlayerKey(_req, ctx) {
      const t = await requirePublisherToken(ctx, "full");
      for (let attempt = 0; attempt < 5; attempt++) {
        const r = await recordOf(t.projectId);
        const fresh = newPublicKey();
        if (await store.swapPublicKey(r.project.id, r.publicKey, fresh)) {
          log.info({ projectId: r.project.id }, "player key rotated");
          return { player: await fullMessage(r, fresh) };
        }
      }
      throw new ConnectError("the player key is being changed concurrently; try again", Code.Aborted);
    },

    async resolvePlayerKey(req, ctx) {
      requireInternalToken(ctx);
      const key = req.publicKey;
      const r = PUBLIC_KEY_PATTERN.test(key) ? await store.findPlayerByPublicKey(key) : null;
      if (!r) throw new ConnectError("unknown player key", Code.NotFound);
      return { player: message(r, key) };
    },

    async verifyOembedHosts(_req, ctx) {
      const t = await requirePublisherToken(ctx, "full");
      const r = await recordOf(t.projectId);
      const { refusedMs } = await verifier.checkNow(r, storedPlayerSettings(r.settings).oembed.hosts);
      if (refusedMs > 0) throw new ConnectError(`oembed: too many host checks asked for; try again in ${Math.ceil(refusedMs / 1000)} s`, Code.ResourceExhausted);
      return answer(t.projectId);
    },

    // No credential: a host's opt-in and its project's key are public by design.
    async findOembedProject(req) {
      const host = normaliseOembedHost(req.host);
      const claim = await store.findVerifiedOembedClaim(host);
      const r = claim ? await store.getPlayer(claim.projectId) : null;
      if (!r) return {};
      // The settings are the claim's source: a host just removed or oEmbed switched off answers nothing.
      const oembed = storedPlayerSettings(r.settings).oembed;
      return oembed.enabled && oembed.hosts.includes(host) ? { player: message(r, await keyOf(r)) } : {};
    },

    async adminGetPlayer(req, ctx) {
      await requireAdmin(ctx);
      if (!PROJECT_ID_PATTERN.test(req.projectId)) throw new ConnectError("project_id: must be 1-64 characters of A-Z, a-z, 0-9, '_' or '-'", Code.InvalidArgument);
      return answer(req.projectId);
    },

    async adminUpdatePlayer(req, ctx) {
      await requireAdmin(ctx);
      if (!PROJECT_ID_PATTERN.test(req.projectId)) throw new ConnectError("project_id: must be 1-64 characters of A-Z, a-z, 0-9, '_' or '-'", Code.InvalidArgument);
      const current = storedPlayerSettings((await recordOf(req.projectId)).settings);
      return save(req.projectId, mergePatch(current, parseJson(req.patchJson, "patch")));
    },
  };
}
