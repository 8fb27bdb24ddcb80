// Admin command line: `npm run admin -- <command> ...`. Talks to a running
// auth service (AUTH_URL) with ADMIN_TOKEN over the Connect protocol.
import { pathToFileURL } from "node:url";
import { Code, ConnectError } from "@connectrpc/connect";
import { AuthService, Scope, type TokenInfo } from "../../gen/auth/v1/auth_pb.js";
import { closeRpcClients, rpcClient } from "../../lib/rpc/client.js";

export const USAGE = `Usage: npm run admin -- <command> [--json]

Commands:
  projects:create <id> [name]        create a project (id: 1-64 of A-Z a-z 0-9 _ -)
  projects:list                      list projects
  tokens:issue <project> <full|read> issue a token; it is printed once, store it
  tokens:list <project>              list a project's tokens (ids and prefixes only)
  tokens:revoke <tokenId>            revoke a token by its id (tok_...)

Environment:
  AUTH_URL     base URL of the auth service, e.g. http://127.0.0.1:7001
  ADMIN_TOKEN  the admin credential the service was started with

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
  const commands = ["projects:create", "projects:list", "tokens:issue", "tokens:list", "tokens:revoke"];
  if (!commands.includes(command)) {
    io.err(`error: unknown command '${command}'\n\n${USAGE}`);
    return 2;
  }
  const url = env.AUTH_URL;
  const adminToken = env.ADMIN_TOKEN;
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
    }
    return 0;
  } catch (e) {
    if (e instanceof UsageError) {
      io.err(`error: ${command}: ${e.message}\n\n${USAGE}`);
      return 2;
    }
    const ce = ConnectError.from(e);
    const hint = ce.code === Code.Unavailable || ce.code === Code.Unknown ? ` (is the auth service running at ${url}?)` : "";
    io.err(`error: ${Code[ce.code]}: ${ce.rawMessage}${hint}`);
    return 1;
  } finally {
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
