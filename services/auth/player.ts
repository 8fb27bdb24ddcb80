// PlayerService: each project's public player key (pk_…) and player
// settings. The key is made on first use and can be rotated; lookups by key
// are for internal services only (they cache them like tokens).
import { randomBytes } from "node:crypto";
import { create } from "@bufbuild/protobuf";
import { Code, ConnectError, type ServiceImpl } from "@connectrpc/connect";
import { PlayerSchema, type Player, type PlayerService } from "../../gen/auth/v1/player_pb.js";
import type { Logger } from "../../lib/log.js";
import type { ProjectSettings } from "../../lib/project-settings.js";
import { DEFAULT_LANG } from "../../lib/voices.js";
import { createCredentialChecks, type CredentialOptions } from "./credentials.js";
import { completePlayerSettings, PlayerSettingsError, storedPlayerSettings, type PlayerSettings } from "./player-settings.js";
import { mergePatch, normalizeStored } from "./settings.js";
import type { PlayerRecord } from "./store/port.js";
import { PROJECT_ID_PATTERN } from "./tokens.js";

export const PUBLIC_KEY_PREFIX = "pk_";
export const PUBLIC_KEY_PATTERN = /^pk_[A-Za-z0-9_-]{16,64}$/;

export const newPublicKey = () => PUBLIC_KEY_PREFIX + randomBytes(18).toString("base64url");

export interface PlayerServiceOptions extends CredentialOptions {
  log: Logger;
}

export function createPlayerServiceImpl(opts: PlayerServiceOptions): ServiceImpl<typeof PlayerService> {
  const { store, log } = opts;
  const { requireInternalToken, requireAdmin, requirePublisherToken } = createCredentialChecks(opts);

  const message = (r: PlayerRecord, key: string, feedLanguage = ""): Player =>
    create(PlayerSchema, { projectId: r.project.id, projectName: r.project.name, publicKey: key, settingsJson: JSON.stringify(storedPlayerSettings(r.settings)), feedLanguage });

  /** The feed's language as set, else the locale of the project's default voice, else the platform's. */
  async function feedLanguageOf(r: PlayerRecord): Promise<string> {
    const set = storedPlayerSettings(r.settings).feed.language;
    if (set) return set;
    const state = await store.getProjectState(r.project.id);
    return (state && normalizeStored(state.settings as Partial<ProjectSettings> | undefined, state.creditChars).defaultLang) || DEFAULT_LANG;
  }

  /** What publishers (and feeds) are answered: the message with the feed's language. */
  const fullMessage = async (r: PlayerRecord, key: string): Promise<Player> => message(r, key, await feedLanguageOf(r));

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

  async function answer(projectId: string): Promise<{ player: Player }> {
    const r = await recordOf(projectId);
    return { player: await fullMessage(r, await keyOf(r)) };
  }

  /** Validates and stores; a host may be claimed for oEmbed by one project only. */
  async function save(projectId: string, next: unknown): Promise<{ player: Player }> {
    let settings: PlayerSettings;
    try {
      settings = completePlayerSettings(next);
    } catch (e) {
      if (e instanceof PlayerSettingsError) throw new ConnectError(e.message, Code.InvalidArgument);
      throw e;
    }
    for (const [i, host] of settings.oembed.hosts.entries()) {
      const holders = await store.findPlayersByOembedHost(host);
      if (holders.some((h) => h.project.id !== projectId)) {
        throw new ConnectError(`oembed.hosts[${i}]: '${host}' is already claimed by another project`, Code.InvalidArgument);
      }
    }
    const r = await store.savePlayerSettings(projectId, settings as unknown as Record<string, unknown>);
    if (!r) throw new ConnectError(`project '${projectId}' not found`, Code.NotFound);
    log.info({ projectId, feedEnabled: settings.feed.enabled, oembedHosts: settings.oembed.hosts.length }, "player settings changed");
    return { player: await fullMessage(r, await keyOf(r)) };
  }

  function parseJson(json: string, field: string): unknown {
    try {
      return JSON.parse(json);
    } catch {
      throw new ConnectError(`${field}: not valid JSON`, Code.InvalidArgument);
    }
  }

  return {
    async getPlayer(_req, ctx) {
      // The key itself may ask too: everything answered is public (feed settings, the key).
      const bearer = /^Bearer[ ]+(pk_\S+)\s*$/i.exec(ctx.requestHeader.get("authorization") ?? "")?.[1];
      if (bearer) {
        const r = PUBLIC_KEY_PATTERN.test(bearer) ? await store.findPlayerByPublicKey(bearer) : null;
        if (!r) throw new ConnectError("unknown player key", Code.Unauthenticated);
        return { player: await fullMessage(r, bearer) };
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

    // No credential: a host's opt-in and its project's key are public by design.
    async findOembedProject(req) {
      const host = req.host.toLowerCase();
      for (const r of await store.findPlayersByOembedHost(host)) {
        if (storedPlayerSettings(r.settings).oembed.enabled) return { player: message(r, await keyOf(r)) };
      }
      return {};
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
