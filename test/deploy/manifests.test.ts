import { readFile } from "node:fs/promises";
import path from "node:path";
import { expect } from "chai";
import { allowed } from "./reachability.js";
import { checkDisruptionAndNetwork, checkImages, checkProbes, checkResources, checkSecretsDocumented, checkSecurityContext, runAllPolicies, workloads } from "./policy.js";
import { CRD_KINDS, DEPLOY, type K8sObject, render, requireTool, validateSchemas } from "./tools.js";

const SERVICES = [
  { name: "auth", port: 7001, entry: "dist/services/auth/main.js" },
  { name: "articles", port: 7002, entry: "dist/services/articles/main.js" },
  { name: "audio", port: 7003, entry: "dist/services/audio/main.js" },
];
const OVERLAYS = { dev: "article-audio-dev", prod: "article-audio" } as const;

const find = (objs: K8sObject[], kind: string, name: string) => {
  const o = objs.find((x) => x.kind === kind && x.metadata.name === name);
  if (!o) throw new Error(`${kind}/${name} is missing from the rendered manifests`);
  return o;
};
const container = (objs: K8sObject[], name: string) => find(objs, "Deployment", name).spec.template.spec.containers[0];
const clone = <T>(x: T): T => structuredClone(x);
const app = (name: string) => ({ "app.kubernetes.io/name": name, "app.kubernetes.io/part-of": "article-audio" });

describe("deploy: Kubernetes manifests", function () {
  this.timeout(120_000);
  const rendered: Record<string, K8sObject[]> = {};
  let validator = "";
  let readme = "";

  before(async function () {
    const kustomize = requireTool(this, "kustomize");
    validator = requireTool(this, "kubernetes-validate");
    readme = await readFile(path.join(DEPLOY, "README.md"), "utf8");
    for (const overlay of Object.keys(OVERLAYS)) rendered[overlay] = await render(kustomize, `overlays/${overlay}`);
  });

  for (const [overlay, namespace] of Object.entries(OVERLAYS)) {
    describe(`overlay ${overlay}`, () => {
      it("passes strict schema validation for Kubernetes 1.37 (CRD kinds checked by the tests below)", async () => {
        const objs = rendered[overlay];
        expect(objs.length).to.be.greaterThan(20);
        const result = await validateSchemas(validator, objs);
        expect(result.problems, result.problems.join("\n")).to.deep.equal([]);
      });

      it("puts every namespaced object in its own namespace", () => {
        for (const o of rendered[overlay].filter((x) => x.kind !== "Namespace")) {
          expect(o.metadata.namespace, `${o.kind}/${o.metadata.name}`).to.equal(namespace);
        }
        expect(find(rendered[overlay], "Namespace", namespace).metadata.labels).to.include({ "pod-security.kubernetes.io/enforce": "restricted" });
      });

      it("meets our policies: resources, probes, security context, pinned images, documented secrets, PDB and NetworkPolicy per workload", () => {
        expect(runAllPolicies(rendered[overlay], readme)).to.deep.equal([]);
      });

      it("runs each service from the compiled entry point with gRPC probes on its RPC port", () => {
        const objs = rendered[overlay];
        const config = find(objs, "ConfigMap", "article-audio-config").data!;
        expect(config.RPC_HOST).to.equal("0.0.0.0");
        for (const s of SERVICES) {
          const c = container(objs, s.name);
          expect(c.args, s.name).to.deep.equal([s.entry]);
          expect(c.ports.find((p: any) => p.name === "rpc").containerPort).to.equal(s.port);
          for (const probe of ["startupProbe", "readinessProbe", "livenessProbe"]) expect(c[probe].grpc, `${s.name} ${probe}`).to.deep.equal({ port: s.port });
          expect(config[`${s.name.toUpperCase()}_PORT`]).to.equal(String(s.port));
          expect(config[`${s.name.toUpperCase()}_URL`]).to.equal(`http://${s.name}:${s.port}`);
          const svc = find(objs, "Service", s.name);
          expect(svc.spec.ports.find((p: any) => p.name === "rpc")).to.include({ port: s.port, appProtocol: "kubernetes.io/h2c" });
        }
      });

      it("probes the gateway with /livez and /readyz, never /healthz", () => {
        const c = container(rendered[overlay], "gateway");
        expect(c.args).to.deep.equal(["dist/gateway/main.js"]);
        expect(c.livenessProbe.httpGet).to.include({ path: "/livez", port: "http" });
        expect(c.startupProbe.httpGet).to.include({ path: "/livez", port: "http" });
        expect(c.readinessProbe.httpGet).to.include({ path: "/readyz", port: "http" });
        expect(c.ports.find((p: any) => p.name === "http").containerPort).to.equal(8080);
      });

      it("exposes metrics on 9464 for Prometheus from every process", () => {
        const objs = rendered[overlay];
        for (const name of ["auth", "articles", "audio", "gateway"]) {
          const d = find(objs, "Deployment", name);
          expect(d.spec.template.metadata.annotations).to.include({ "prometheus.io/scrape": "true", "prometheus.io/port": "9464" });
          expect(d.spec.template.spec.containers[0].ports.find((p: any) => p.name === "metrics").containerPort).to.equal(9464);
          expect(find(objs, "Service", name).spec.ports.some((p: any) => p.name === "metrics" && p.port === 9464)).to.equal(true);
        }
        expect(allowed(objs, namespace, {}, app("gateway"), 9464)).to.equal(false);
        // The gateway serves /metrics on this listener only; its public port answers 404 there.
        const config = find(objs, "ConfigMap", "article-audio-config").data!;
        expect(config.METRICS_PORT).to.equal("9464");
        expect(config.METRICS_ON_PUBLIC_PORT ?? "false").to.equal("false");
      });

      it("publishes only /api, /audio and the listener side (/player, /feeds, /oembed) through the Ingress, to the gateway", () => {
        const ing = find(rendered[overlay], "Ingress", "gateway");
        const paths = ing.spec.rules.flatMap((r: any) => r.http.paths);
        expect(paths.map((p: any) => p.path).sort()).to.deep.equal(["/api", "/audio", "/feeds", "/oembed", "/player"]);
        for (const p of paths) expect(p.backend.service).to.deep.equal({ name: "gateway", port: { name: "http" } });
      });

      it("lets traffic flow only along the calls the code makes", () => {
        const objs = rendered[overlay];
        const gw = app("gateway"), auth = app("auth"), articles = app("articles"), audio = app("audio");
        const yes: [Record<string, string>, Record<string, string>, number][] = [
          [gw, auth, 7001], [gw, articles, 7002], [gw, audio, 7003],
          [articles, auth, 7001], [audio, articles, 7002], [audio, auth, 7001],
        ];
        const no: [Record<string, string>, Record<string, string>, number][] = [
          [auth, articles, 7002], [auth, audio, 7003], [articles, audio, 7003],
          [gw, auth, 9464], [gw, articles, 7001], [{}, auth, 7001],
        ];
        for (const [a, b, port] of yes) expect(allowed(objs, namespace, a, b, port), `${a["app.kubernetes.io/name"]} → ${b["app.kubernetes.io/name"]}:${port}`).to.equal(true);
        for (const [a, b, port] of no) expect(allowed(objs, namespace, a, b, port), `${a["app.kubernetes.io/name"] ?? "any pod"} → ${b["app.kubernetes.io/name"]}:${port}`).to.equal(false);
        // The internet, public addresses only, for the services that call out: audio (TTS providers,
        // https), auth (oEmbed host verification, https), articles (recrawls and webhooks, http(s)).
        const internetRules = (name: string) =>
          objs
            .filter((p) => p.kind === "NetworkPolicy" && p.spec.podSelector?.matchLabels?.["app.kubernetes.io/name"] === name)
            .flatMap((p) => (p.spec.egress ?? []).filter((r: any) => r.to?.some((t: any) => t.ipBlock)));
        const ports = (name: string) => internetRules(name).flatMap((r: any) => r.ports.map((p: any) => `${p.protocol}/${p.port}`)).sort();
        expect(["auth", "articles", "audio", "gateway"].map(ports)).to.deep.equal([["TCP/443"], ["TCP/443", "TCP/80"], ["TCP/443"], []]);
        const PRIVATE = ["10.0.0.0/8", "172.16.0.0/12", "192.168.0.0/16", "169.254.0.0/16", "100.64.0.0/10"];
        for (const name of ["auth", "articles", "audio"]) {
          for (const rule of internetRules(name)) expect(rule.to, name).to.deep.equal([{ ipBlock: { cidr: "0.0.0.0/0", except: PRIVATE } }]);
        }
      });

      it("scales audio on the job backlog with KEDA and the gateway on CPU", () => {
        const objs = rendered[overlay];
        const so = find(objs, "ScaledObject", "audio");
        expect(so.apiVersion).to.equal("keda.sh/v1alpha1");
        expect(so.spec.scaleTargetRef).to.include({ kind: "Deployment", name: "audio" });
        expect(so.spec.minReplicaCount).to.be.at.most(so.spec.maxReplicaCount);
        const trigger = so.spec.triggers[0];
        // Jobs wait in one consumer per project, so the trigger reads the summed backlog gauge, not one consumer's lag.
        expect(trigger.type).to.equal("prometheus");
        expect(trigger.metadata.query).to.match(/^max\(audio_queue_jobs\{state="pending"\}\)$/);
        expect(Number(trigger.metadata.threshold)).to.be.greaterThan(0);
        // KEDA resolves the address from its own namespace: it must be a full service name.
        expect(trigger.metadata.serverAddress).to.match(/^http:\/\/[a-z0-9-]+\.[a-z0-9-]+\.svc\.cluster\.local:\d+$/);
        const hpa = find(objs, "HorizontalPodAutoscaler", "gateway");
        expect(hpa.spec.scaleTargetRef).to.include({ kind: "Deployment", name: "gateway" });
        expect(hpa.spec.metrics[0].resource.name).to.equal("cpu");
        expect(objs.filter((o) => o.kind === "HorizontalPodAutoscaler").map((o) => o.metadata.name)).to.not.include("audio");
      });
    });
  }

  describe("dev overlay specifics", () => {
    it("runs MongoDB and NATS JetStream as StatefulSets with volumes and Services", () => {
      const objs = rendered.dev;
      for (const [name, port] of [["mongodb", 27017], ["nats", 4222]] as const) {
        const sts = find(objs, "StatefulSet", name);
        expect(sts.spec.volumeClaimTemplates[0].spec.resources.requests.storage).to.match(/Gi$/);
        expect(find(objs, "Service", name).spec.ports.some((p: any) => p.port === port)).to.equal(true);
      }
      expect(find(objs, "ConfigMap", "nats-config").data!["nats.conf"]).to.match(/jetstream\s*\{[^}]*store_dir:\s*\/data/);
      expect(allowed(objs, OVERLAYS.dev, app("articles"), { "app.kubernetes.io/name": "nats" }, 4222)).to.equal(true);
      expect(allowed(objs, OVERLAYS.dev, app("auth"), { "app.kubernetes.io/name": "nats" }, 4222)).to.equal(false);
      expect(allowed(objs, OVERLAYS.dev, app("gateway"), { "app.kubernetes.io/name": "mongodb" }, 27017)).to.equal(true);
    });

    it("carries only obviously dev-only secret values", () => {
      const secret = find(rendered.dev, "Secret", "article-audio-secrets");
      const values = { ...(secret.stringData ?? {}), ...Object.fromEntries(Object.entries(secret.data ?? {}).map(([k, v]) => [k, Buffer.from(String(v), "base64").toString()])) };
      expect(Object.keys(values)).to.include.members(["internal-token", "admin-token", "mongodb-url"]);
      for (const [k, v] of Object.entries(values)) {
        if (k === "mongodb-url") expect(v).to.equal("mongodb://mongodb:27017");
        else expect(v, k).to.include("dev-only");
      }
    });
  });

  describe("prod overlay specifics", () => {
    it("runs several replicas of everything and keeps credentials out of the manifests", () => {
      const objs = rendered.prod;
      const replicas = Object.fromEntries(workloads(objs).map((w) => [w.metadata.name, w.spec.replicas]));
      expect(replicas).to.deep.equal({ auth: 2, articles: 2, audio: 3, gateway: 3 });
      expect(find(objs, "HorizontalPodAutoscaler", "gateway").spec.minReplicas).to.be.at.least(3);
      expect(find(objs, "ScaledObject", "audio").spec.minReplicaCount).to.be.at.least(3);
      expect(objs.filter((o) => o.kind === "Secret")).to.deep.equal([]);
      expect(objs.filter((o) => o.kind === "StatefulSet")).to.deep.equal([]);
      expect(JSON.stringify(objs)).to.not.include("dev-only");
    });

    it("builds public audio URLs on https and /audio, and ships a ServiceMonitor that finds the metrics ports", () => {
      const objs = rendered.prod;
      const config = find(objs, "ConfigMap", "article-audio-config").data!;
      // Links never follow a request's Host in production (PUBLIC_BASE_URL), and audio sits on the same https origin.
      expect(config.PUBLIC_BASE_URL).to.match(/^https:\/\/[^/]+$/);
      expect(config.AUDIO_BASE_URL).to.equal(`${config.PUBLIC_BASE_URL}/audio`);
      const sm = find(objs, "ServiceMonitor", "article-audio");
      const port = sm.spec.endpoints[0].port;
      const services = objs.filter((o) => o.kind === "Service" && Object.entries(sm.spec.selector.matchLabels).every(([k, v]) => o.metadata.labels?.[k] === v));
      expect(services.map((s) => s.metadata.name).sort()).to.deep.equal(["articles", "audio", "auth", "gateway"]);
      for (const s of services) expect(s.spec.ports.map((p: any) => p.name)).to.include(port);
      expect(find(objs, "Ingress", "gateway").spec.tls[0].secretName).to.be.a("string");
    });
  });

  describe("the checks themselves catch broken manifests", () => {
    it("schema validation rejects an unknown field and a wrongly typed port", async () => {
      const objs = clone(rendered.prod);
      const d = find(objs, "Deployment", "auth");
      d.spec.template.spec.containers[0].ports[0].containerPort = "seven-thousand-one";
      find(objs, "PodDisruptionBudget", "auth").spec.maxUnavailible = 1;
      const result = await validateSchemas(validator, objs);
      expect(result.ok).to.equal(false);
      expect(result.problems.join("\n")).to.include("deployment/auth").and.include("poddisruptionbudget/auth");
      expect([...CRD_KINDS]).to.include.members(["ScaledObject", "ServiceMonitor"]);
    });

    it("policies flag missing limits, a latest image, a root container, a wrong probe port, an undocumented secret and an unprotected workload", () => {
      const objs = clone(rendered.prod);
      const c = container(objs, "audio");
      delete c.resources.limits;
      c.image = "registry.example.com/article-audio:latest";
      c.securityContext.readOnlyRootFilesystem = false;
      c.livenessProbe.grpc.port = 9999;
      c.env.push({ name: "EXTRA", valueFrom: { secretKeyRef: { name: "article-audio-secrets", key: "not-in-readme" } } });
      const kept = objs.filter((o) => !(o.metadata.name === "audio" && (o.kind === "PodDisruptionBudget" || o.kind === "NetworkPolicy")));
      expect(checkResources(kept)).to.deep.equal(["Deployment/audio container audio: no limits.cpu", "Deployment/audio container audio: no limits.memory"]);
      expect(checkImages(kept)).to.deep.equal(["Deployment/audio container audio: image registry.example.com/article-audio:latest uses latest"]);
      expect(checkSecurityContext(kept)).to.deep.equal(["Deployment/audio container audio: readOnlyRootFilesystem is not true"]);
      expect(checkProbes(kept)).to.deep.equal(["Deployment/audio container audio: livenessProbe port 9999 is not a container port"]);
      expect(checkSecretsDocumented(kept, readme)).to.deep.equal(["Deployment/audio audio EXTRA: Secret key article-audio-secrets/not-in-readme is not documented in deploy/README.md"]);
      expect(checkDisruptionAndNetwork(kept)).to.deep.equal(["Deployment/audio: no PodDisruptionBudget selects its pods", "Deployment/audio: no NetworkPolicy of its own selects its pods"]);
    });
  });
});
