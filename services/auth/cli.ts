// Admin command line: `npm run admin -- <command> ...`. Talks to a running
// auth service (AUTH_URL) with ADMIN_TOKEN over the Connect protocol; without
// AUTH_URL, to one started on the embedded default's DATA_DIR (cli-direct.ts).
import { constants } from "node:fs";
import { access } from "node:fs/promises";
import { pathToFileURL } from "node:url";
import { Code, ConnectError } from "@connectrpc/connect";
import { ArticleStatus, ArticlesService } from "../../gen/articles/v1/articles_pb.js";
import { AuthService, Scope, type ProjectSettings, type TokenInfo } from "../../gen/auth/v1/auth_pb.js";
import { PlayerService } from "../../gen/auth/v1/player_pb.js";
import { closeRpcClients, rpcClient } from "../../lib/rpc/client.js";
import { audioTimingOf } from "../../gateway/import-stream.js";
import { importArgs, importCommand, type ImportCommand } from "../articles/import-cli.js";
import { DirectRefusal, openDirectAuth, type DirectAuth } from "./cli-direct.js";

export const USAGE = `Usage: npm run admin -- <command> [--json]

Commands:
  projects:create <id> [name]        create a project (id: 1-64 of A-Z a-z 0-9 _ -)
  projects:list                      list projects
  tokens:issue <project> <full|read> issue a token; it is printed once, store it
  tokens:list <project>              list a project's tokens (ids and prefixes only)
  tokens:revoke <tokenId>            revoke a token by its id (tok_...)
  settings:get <project>             show a project's settings, balance and today's count
  settings:set <project> <change>... change settings: a JSON merge patch ('{"dailyLimit":10}')
                                     or key=value pairs (dailyLimit=10 rules.maxChars=20000
                                     webhook=null); values are JSON, else strings.
                                     Rate limits: rateLimit.writes.perSecond=2
                                     rateLimit.writes.burst=10 (reads, imports likewise; null =
                                     back to the defaults; docs/limits.md)
                                     Loudness: loudness.lufs=-16 loudness.truePeakDbtp=-1.5
                                     (null = the deployment's; docs/audio.md)
                                     Audio on demand: audio=onDemand (default immediate;
                                     docs/statuses.md)
  credit:add <project> <chars>       add characters to a bounded balance
  player:get <project>               show the public player key, feed and oEmbed settings
  player:set <project> <change>...   change them: a JSON merge patch or key=value pairs
                                     (feed.title="Acme audio" feed.enabled=false
                                     oembed.hosts='["news.example"]')
  articles:recrawl <project> <id>    fetch the article's url again; re-audify if it changed
  articles:decision <project> <id>   why an article is rejected or waiting
  articles:readmit [project]         retry articles waiting in limit_reached / no_money now
  import --project <id> --file <articles.ndjson> [--audio onDemand|immediate] [--failures <file>]
                                     bulk import, one ArticleCreateRequest per line
                                     (docs/import.md): prints progress and the summary,
                                     the fail lines go to --failures or stderr; exit 1
                                     when a line failed
  articles:recount                   recompute list totals and status counts from the articles
                                     (after a database failure; a pass over all of them)

Environment:
  AUTH_URL        base URL of the auth service, e.g. http://127.0.0.1:7001
  ADMIN_TOKEN     the admin credential the service was started with
  DATA_DIR        without AUTH_URL (and MONGODB_URL), the projects:, tokens:, settings:,
                  credit: and player: commands work on this data directory of the
                  embedded default (default ./.data) while the platform is stopped;
                  no ADMIN_TOKEN needed. Lost demo token: npm run admin -- tokens:issue demo full
  ARTICLES_URL    base URL of the articles service (articles:* and import; also lets
                  settings:set and credit:add re-admit waiting articles at once)
  INTERNAL_TOKEN  the service-to-service token (articles:* and import)
  MAX_BODY_BYTES  longest line import accepts, as the gateway (default 10 MiB)

Exit codes: 0 done, 1 the service refused or could not be reached, 2 usage error.`;

export interface CliIo {
  out: (s: string) => void;
  err: (s: string) => void;
}

const date = (secs: bigint) => (secs === 0n ? "-" : new Date(Number(secs) * 1000).toISOString().replace(/\.\d+Z$/, "Z"));
const scopeName = (s: Scope) => (s === Scope.FULL ? "full" : s === Scope.READ ? "read" : "?");
const tokenJson = (t: TokenInfo) => ({
  id: t.id,
  project: t.projectId,
  scope: scopeName(t.scope),
  prefix: t.prefix,
  created: date(t.created),
  revoked: t.revoked === 0n ? null : date(t.revoked),
});

function table(rows: string[][]): string {
  const widths = rows[0].map((_, c) => Math.max(...rows.map((r) => r[c].length)));
  return rows.map((r) => r.map((cell, c) => cell.padEnd(widths[c])).join("  ").trimEnd()).join("\n");
}

class UsageError extends Error {}

const statusName = (s: ArticleStatus) => (ArticleStatus[s] ?? "UNSPECIFIED").toLowerCase();

/** `a.b=value` → {a: {b: value}}; the value is JSON when it parses, else the plain string. */
export function patchFromArgs(args: string[]): string {
  if (args.length === 1 && args[0].trimStart().startsWith("{")) return args[0];
  const patch: Record<string, unknown> = {};
  for (const arg of args) {
    const eq = arg.indexOf("=");
    if (eq < 1) throw new UsageError(`expected key=value or a JSON object, got '${arg}'`);
    const path = arg.slice(0, eq).split(".");
    const raw = arg.slice(eq + 1);
    let value: unknown;
    try {
      value = JSON.parse(raw);
    } catch {
      value = raw;
    }
    let node = patch;
    for (const key of path.slice(0, -1)) node = (node[key] ??= {}) as Record<string, unknown>;
    node[path[path.length - 1]] = value;
  }
  return JSON.stringify(patch);
}

function settingsJson(s: ProjectSettings) {
  return {
    project: s.projectId,
    ...(JSON.parse(s.settingsJson) as object),
    creditChars: s.creditChars === undefined ? null : Number(s.creditChars),
    usage: { day: s.usageDay || null, count: Number(s.usedToday) },
  };
}

function expectArgs(args: string[], min: number, max: number): void {
  if (args.length < min) throw new UsageError("missing argument");
  if (args.length > max) throw new UsageError(`unexpected argument '${args[max]}'`);
}

/** Runs one command; resolves to the process exit code. */
export async function runCli(argv: string[], env: Record<string, string | undefined>, io: CliIo): Promise<number> {
  const json = argv.includes("--json");
  const [command, ...args] = argv.filter((a) => a !== "--json");
  if (!command || command === "help" || command === "--help" || command === "-h") {
    (command ? io.out : io.err)(USAGE);
    return command ? 0 : 2;
  }
  const commands = [
    "projects:create",
    "projects:list",
    "tokens:issue",
    "tokens:list",
    "tokens:revoke",
    "settings:get",
    "settings:set",
    "credit:add",
    "player:get",
    "player:set",
    "articles:recrawl",
    "articles:decision",
    "articles:readmit",
    "import",
    "articles:recount",
  ];
  if (!commands.includes(command)) {
    io.err(`error: unknown command '${command}'\n\n${USAGE}`);
    return 2;
  }
  const articlesCommand = command.startsWith("articles:") || command === "import";
  const articlesUrl = env.ARTICLES_URL && /^https?:\/\/\S+$/.test(env.ARTICLES_URL) ? env.ARTICLES_URL : undefined;
  if (articlesCommand && (!articlesUrl || !env.INTERNAL_TOKEN)) {
    io.err("error: articles:* and import commands need ARTICLES_URL (base URL of the articles service) and INTERNAL_TOKEN");
    return 2;
  }
  const articles = articlesUrl && env.INTERNAL_TOKEN ? rpcClient(ArticlesService, articlesUrl, { token: env.INTERNAL_TOKEN, timeoutMs: 60_000 }) : undefined;
  /** After a change that can unblock waiting articles; best effort, the articles service also retries on its own. */
  const readmit = async (projectId: string) => (articles ? (await articles.readmitDeferred({ projectId })).admitted : undefined);

  let direct: DirectAuth | undefined;
  if (!articlesCommand && !env.AUTH_URL && !env.MONGODB_URL) {
    try {
      direct = await openDirectAuth(env);
    } catch (e) {
      io.err(`error: ${e instanceof DirectRefusal ? e.message : `cannot open the auth database under DATA_DIR: ${(e as Error).message}`}`);
      return 1;
    }
  }
  // import also asks the auth service whether the project exists.
  const url = direct?.url ?? (articlesCommand && command !== "import" ? "http://unused" : env.AUTH_URL);
  const adminToken = direct?.adminToken ?? (articlesCommand && command !== "import" ? "unused" : env.ADMIN_TOKEN);
  if (!url || !/^https?:\/\/\S+$/.test(url)) {
    io.err("error: set AUTH_URL to the auth service's base URL, e.g. AUTH_URL=http://127.0.0.1:7001");
    return 2;
  }
  if (!adminToken) {
    io.err("error: set ADMIN_TOKEN to the admin credential the auth service was started with");
    return 2;
  }
  const client = rpcClient(AuthService, url, { token: adminToken, timeoutMs: 10_000 });
  const print = (human: string, data: unknown) => io.out(json ? JSON.stringify(data, null, 2) : human);

  try {
    switch (command) {
      case "projects:create": {
        expectArgs(args, 1, 2);
        const { project } = await client.createProject({ id: args[0], name: args[1] ?? "" });
        const p = { id: project!.id, name: project!.name, created: date(project!.created) };
        print(`created project ${p.id} (${p.name})`, p);
        break;
      }
      case "projects:list": {
        expectArgs(args, 0, 0);
        const { projects } = await client.listProjects({});
        const list = projects.map((p) => ({ id: p.id, name: p.name, created: date(p.created) }));
        print(list.length ? table([["ID", "NAME", "CREATED"], ...list.map((p) => [p.id, p.name, p.created])]) : "no projects", list);
        break;
      }
      case "tokens:issue": {
        expectArgs(args, 2, 2);
        const scope = args[1] === "full" ? Scope.FULL : args[1] === "read" ? Scope.READ : undefined;
        if (scope === undefined) throw new UsageError(`scope must be 'full' or 'read', not '${args[1]}'`);
        const res = await client.issueToken({ projectId: args[0], scope });
        const info = tokenJson(res.info!);
        print(
          `issued ${info.scope} token ${info.id} for project ${info.project}\n` +
            `token (shown only now, store it safely):\n\n  ${res.token}\n`,
          { token: res.token, ...info },
        );
        break;
      }
      case "tokens:list": {
        expectArgs(args, 1, 1);
        const { tokens } = await client.listTokens({ projectId: args[0] });
        const list = tokens.map(tokenJson);
        print(
          list.length
            ? table([["ID", "SCOPE", "PREFIX", "CREATED", "REVOKED"], ...list.map((t) => [t.id, t.scope, `${t.prefix}…`, t.created, t.revoked ?? "-"])])
            : `no tokens in project ${args[0]}`,
          list,
        );
        break;
      }
      case "tokens:revoke": {
        expectArgs(args, 1, 1);
        await client.revokeToken({ tokenId: args[0] });
        print(`revoked token ${args[0]}`, { revoked: args[0] });
        break;
      }
      case "settings:get": {
        expectArgs(args, 1, 1);
        const { settings } = await client.getProjectSettings({ projectId: args[0] });
        const s = settingsJson(settings!);
        print(JSON.stringify(s, null, 2), s);
        break;
      }
      case "settings:set": {
        if (args.length < 2) throw new UsageError("missing argument");
        const { settings } = await client.updateProjectSettings({ projectId: args[0], patchJson: patchFromArgs(args.slice(1)) });
        const s = settingsJson(settings!);
        const admitted = await readmit(args[0]);
        print(`updated settings of ${args[0]}\n${JSON.stringify(s, null, 2)}${admitted ? `\nadmitted ${admitted} waiting article(s)` : ""}`, { ...s, admitted });
        break;
      }
      case "credit:add": {
        expectArgs(args, 2, 2);
        if (!/^\d{1,13}$/.test(args[1]) || Number(args[1]) < 1) throw new UsageError(`chars must be a whole number of 1 or more, not '${args[1]}'`);
        const res = await client.addCredit({ projectId: args[0], chars: BigInt(args[1]) });
        const admitted = await readmit(args[0]);
        const balance = Number(res.creditChars);
        print(`balance of ${args[0]}: ${balance} characters${admitted ? `; admitted ${admitted} waiting article(s)` : ""}`, { project: args[0], creditChars: balance, admitted });
        break;
      }
      case "player:get":
      case "player:set": {
        const change = command === "player:set";
        if (change ? args.length < 2 : args.length !== 1) throw new UsageError(change ? "missing argument" : "expected one project");
        const players = rpcClient(PlayerService, url, { token: adminToken, timeoutMs: 10_000 });
        const { player } = change
          ? await players.adminUpdatePlayer({ projectId: args[0], patchJson: patchFromArgs(args.slice(1)) })
          : await players.adminGetPlayer({ projectId: args[0] });
        const out = { project: player!.projectId, publicKey: player!.publicKey, settings: JSON.parse(player!.settingsJson) };
        print(`${change ? `updated player settings of ${args[0]}\n` : ""}${JSON.stringify(out, null, 2)}`, out);
        break;
      }
      case "articles:recrawl": {
        expectArgs(args, 2, 2);
        const r = await articles!.recrawlArticle({ projectId: args[0], articleId: args[1] });
        const out = { id: args[1], changed: r.changed, revision: Number(r.revision), status: statusName(r.status) };
        print(r.changed ? `content changed: revision ${out.revision}, status ${out.status}` : `content unchanged; status ${out.status}`, out);
        break;
      }
      case "articles:decision": {
        expectArgs(args, 2, 2);
        const d = await articles!.getArticleDecision({ projectId: args[0], articleId: args[1] });
        const out = { id: args[1], status: statusName(d.status), revision: Number(d.revision), rule: d.rule || null, detail: d.detail || null, at: d.decidedAt || null, reservedChars: Number(d.reservedChars) };
        print(`${out.status} (revision ${out.revision})${out.rule ? `: ${out.rule}: ${out.detail}` : ""}`, out);
        break;
      }
      case "import": {
        let cmd: ImportCommand;
        try {
          cmd = importArgs(args);
          audioTimingOf(cmd.audio);
        } catch (e) {
          throw new UsageError((e as Error).message);
        }
        try {
          await access(cmd.file, constants.R_OK);
        } catch {
          throw new UsageError(`cannot read --file '${cmd.file}'`);
        }
        const { projects } = await client.listProjects({});
        if (!projects.some((p) => p.id === cmd.projectId)) throw new ConnectError(`project '${cmd.projectId}' does not exist`, Code.NotFound);
        const maxLineBytes = env.MAX_BODY_BYTES && /^\d+$/.test(env.MAX_BODY_BYTES) ? Number(env.MAX_BODY_BYTES) : undefined;
        return await importCommand(articles!, env.INTERNAL_TOKEN!, { ...cmd, maxLineBytes }, io);
      }
      case "articles:readmit": {
        expectArgs(args, 0, 1);
        const r = await articles!.readmitDeferred({ projectId: args[0] ?? "" });
        print(`admitted ${r.admitted} waiting article(s)`, { admitted: r.admitted });
        break;
      }
      case "articles:recount": {
        expectArgs(args, 0, 0);
        const r = await articles!.recountArticles({});
        print(`article counts recomputed in ${r.tookMs} ms`, { tookMs: Number(r.tookMs) });
        break;
      }
    }
    return 0;
  } catch (e) {
    if (e instanceof UsageError) {
      io.err(`error: ${command}: ${e.message}\n\n${USAGE}`);
      return 2;
    }
    const ce = ConnectError.from(e);
    const hint =
      ce.code === Code.Unavailable || ce.code === Code.Unknown
        ? articlesCommand
          ? ` (is the articles service running at ${articlesUrl}?)`
          : ` (is the auth service running at ${url}?)`
        : "";
    io.err(`error: ${Code[ce.code]}: ${ce.rawMessage}${hint}`);
    return 1;
  } finally {
    await direct?.close();
    closeRpcClients();
  }
}

if (process.argv[1] && import.meta.url === pathToFileURL(process.argv[1]).href) {
  runCli(process.argv.slice(2), process.env, {
    out: (s) => process.stdout.write(s + "\n"),
    err: (s) => process.stderr.write(s + "\n"),
  }).then((code) => {
    process.exitCode = code;
  });
}
