// Locating and running the offline deploy tools installed by deploy/tools/install.sh.
import { execFile } from "node:child_process";
import { existsSync } from "node:fs";
import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { promisify } from "node:util";
import { parseAllDocuments, stringify } from "yaml";

const run = promisify(execFile);

export const ROOT = path.resolve(import.meta.dirname, "../..");
export const DEPLOY = path.join(ROOT, "deploy");
/** Kinds served by CRDs; the bundled Kubernetes schemas cannot know them. */
export const CRD_KINDS = new Set(["ScaledObject", "ServiceMonitor"]);
export const K8S_VERSION = "1.37.0";

export type K8sObject = { apiVersion: string; kind: string; metadata: { name: string; namespace?: string; labels?: Record<string, string> }; spec?: any; data?: Record<string, string> } & Record<string, any>;

function toolDirs(): string[] {
  const dirs = [process.env.DEPLOY_TOOLS_DIR && path.join(process.env.DEPLOY_TOOLS_DIR, "bin"), path.join(ROOT, ".tmp/tools/bin")];
  return [...dirs, ...(process.env.PATH ?? "").split(path.delimiter)].filter((d): d is string => !!d);
}

export function findTool(name: string): string | undefined {
  for (const dir of toolDirs()) {
    const p = path.join(dir, name);
    if (existsSync(p)) return p;
  }
  return undefined;
}

/** Same convention as test/support/servers.ts: fail under CI=true, otherwise skip loudly. */
export function requireTool(ctx: Mocha.Context, name: string): string {
  const found = findTool(name);
  if (found) return found;
  const msg = `deploy checks did not run: ${name} not found (run: bash deploy/tools/install.sh)`;
  if (process.env.CI === "true") throw new Error(msg);
  console.warn(`      ⚠ ${msg}`);
  ctx.skip();
}

export async function render(kustomize: string, dir: string): Promise<K8sObject[]> {
  const { stdout } = await run(kustomize, ["build", path.join(DEPLOY, "k8s", dir)], { maxBuffer: 32 * 1024 * 1024 });
  return parseAllDocuments(stdout)
    .map((d) => {
      if (d.errors.length) throw new Error(`kustomize output for ${dir} is not valid YAML: ${d.errors[0].message}`);
      return d.toJS() as K8sObject;
    })
    .filter((o) => o);
}

export interface SchemaResult {
  ok: boolean;
  /** ERROR/WARN lines of the validator, one per problem. */
  problems: string[];
}

/** Strict validation (unknown fields are errors) of built-in kinds against the bundled schemas. */
export async function validateSchemas(validator: string, objects: K8sObject[]): Promise<SchemaResult> {
  const dir = await mkdtemp(path.join(tmpdir(), "k8s-validate-"));
  try {
    const file = path.join(dir, "objects.yaml");
    await writeFile(file, objects.filter((o) => !CRD_KINDS.has(o.kind)).map((o) => stringify(o)).join("---\n"));
    const args = ["--strict", "--quiet", "-k", K8S_VERSION, file];
    try {
      const { stdout, stderr } = await run(validator, args, { maxBuffer: 8 * 1024 * 1024 });
      const problems = `${stdout}\n${stderr}`.split("\n").filter((l) => /^(ERROR|WARN)/.test(l));
      return { ok: problems.length === 0, problems };
    } catch (e) {
      const err = e as { stdout?: string; stderr?: string; message: string };
      const problems = `${err.stdout ?? ""}\n${err.stderr ?? ""}`.split("\n").filter((l) => /^(ERROR|WARN)/.test(l));
      return { ok: false, problems: problems.length ? problems : [err.message] };
    }
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}
