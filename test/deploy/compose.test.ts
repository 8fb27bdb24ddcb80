import { readFile } from "node:fs/promises";
import path from "node:path";
import { expect } from "chai";
import { parse, parseAllDocuments } from "yaml";
import { DEPLOY, type K8sObject } from "./tools.js";

const APPS = ["auth", "articles", "audio", "gateway"] as const;
// Values that differ between a laptop and a cluster on purpose.
const PER_ENVIRONMENT = new Set(["AUDIO_BASE_URL"]);

async function baseObjects(): Promise<K8sObject[]> {
  const dir = path.join(DEPLOY, "k8s/base");
  const out: K8sObject[] = [];
  for (const file of ["configmap.yaml", ...APPS.map((a) => `${a}.yaml`)]) {
    for (const doc of parseAllDocuments(await readFile(path.join(dir, file), "utf8"))) out.push(doc.toJS() as K8sObject);
  }
  return out;
}

describe("deploy: compose.yaml", () => {
  let compose: any;
  let base: K8sObject[];
  let config: Record<string, string>;

  before(async () => {
    // merge: compose files share settings through YAML anchors and << keys.
    compose = parse(await readFile(path.join(DEPLOY, "compose.yaml"), "utf8"), { merge: true });
    base = await baseObjects();
    config = base.find((o) => o.kind === "ConfigMap")!.data!;
  });

  const k8sContainer = (name: string) => base.find((o) => o.kind === "Deployment" && o.metadata.name === name)!.spec.template.spec.containers[0];

  it("runs the four processes from one image, with the Kubernetes entry points", () => {
    const images = new Set(APPS.map((a) => compose.services[a].image));
    expect([...images]).to.have.length(1);
    expect([...images][0]).to.match(/^article-audio:\d+\.\d+\.\d+$/);
    for (const a of APPS) expect(compose.services[a].command, a).to.deep.equal(k8sContainer(a).args);
  });

  it("gives each process exactly the variables its Deployment gets, with the same non-secret values", () => {
    for (const a of APPS) {
      const c = k8sContainer(a);
      const k8sNames = new Set([...Object.keys(config), ...c.env.map((e: any) => e.name)]);
      const env: Record<string, string> = compose.services[a].environment;
      expect(Object.keys(env).sort(), a).to.deep.equal([...k8sNames].sort());
      for (const [k, v] of Object.entries(config)) if (!PER_ENVIRONMENT.has(k)) expect(env[k], `${a} ${k}`).to.equal(v);
    }
  });

  it("takes credentials from the caller's environment, never from the file", () => {
    for (const a of APPS) {
      const c = k8sContainer(a);
      for (const e of c.env) {
        const v = compose.services[a].environment[e.name];
        if (e.name === "MONGODB_URL") expect(v).to.equal("mongodb://mongo:27017");
        else if (e.valueFrom.secretKeyRef.optional) expect(v, `${a} ${e.name}`).to.equal(`\${${e.name}:-}`);
        else expect(v, `${a} ${e.name}`).to.match(new RegExp(`^\\$\\{${e.name}:\\?`));
      }
    }
  });

  it("health-checks each process on the port it listens on, and starts it after what it needs", () => {
    for (const a of APPS) {
      const svc = compose.services[a];
      const port = String(k8sContainer(a).ports[0].containerPort);
      const test: string[] = svc.healthcheck.test;
      expect(test.slice(0, 3), a).to.deep.equal(["CMD", "node", "-e"]);
      if (a === "gateway") expect(test[3]).to.include(`127.0.0.1:${port}/readyz`);
      else {
        expect(test[3]).to.include("/grpc.health.v1.Health/Check");
        expect(test[4], a).to.equal(port);
      }
    }
    const deps = (a: string) => Object.keys(compose.services[a].depends_on ?? {}).sort();
    expect(deps("auth")).to.deep.equal(["mongo"]);
    expect(deps("articles")).to.deep.equal(["auth", "mongo", "nats"]);
    expect(deps("audio")).to.deep.equal(["articles", "auth", "mongo", "nats"]);
    expect(deps("gateway")).to.deep.equal(["articles", "audio", "auth", "mongo"]);
    for (const a of APPS) for (const d of Object.values<any>(compose.services[a].depends_on)) expect(d.condition).to.equal("service_healthy");
    for (const d of ["mongo", "nats"]) expect(compose.services[d].healthcheck.test[0]).to.equal("CMD");
  });

  it("runs NATS with JetStream and pins every datastore image", () => {
    expect(compose.services.nats.command).to.include("--jetstream");
    for (const d of ["mongo", "nats"]) expect(compose.services[d].image).to.match(/^[a-z]+:\d+\.\d+\.\d+(-[a-z]+)?$/);
  });

  it("locks the app containers down like the pods: read-only root, no capabilities, gateway on loopback only", () => {
    for (const a of APPS) {
      const s = compose.services[a];
      expect(s.read_only, a).to.equal(true);
      expect(s.cap_drop).to.deep.equal(["ALL"]);
      expect(s.tmpfs).to.include("/tmp");
    }
    expect(compose.services.gateway.ports).to.deep.equal(["127.0.0.1:8080:8080"]);
    for (const a of ["auth", "articles", "audio"]) expect(compose.services[a].ports, a).to.equal(undefined);
  });
});
