// Our own rules for rendered manifests. Each check returns human-readable violations,
// so a test shows every problem at once and the same checks can be fed broken input.
import type { K8sObject } from "./tools.js";

const WORKLOAD_KINDS = new Set(["Deployment", "StatefulSet", "DaemonSet"]);

type Selector = { matchLabels?: Record<string, string>; matchExpressions?: { key: string; operator: string; values?: string[] }[] };

export function workloads(objs: K8sObject[]): K8sObject[] {
  return objs.filter((o) => WORKLOAD_KINDS.has(o.kind));
}

function id(o: K8sObject): string {
  return `${o.kind}/${o.metadata.name}`;
}

function podLabels(w: K8sObject): Record<string, string> {
  return w.spec?.template?.metadata?.labels ?? {};
}

function containersOf(w: K8sObject): any[] {
  const spec = w.spec?.template?.spec ?? {};
  return [...(spec.initContainers ?? []), ...(spec.containers ?? [])];
}

/** An empty selector matches nothing here on purpose: namespace-wide policies do not count. */
export function selects(sel: Selector | undefined, labels: Record<string, string>): boolean {
  if (!sel) return false;
  const ml = Object.entries(sel.matchLabels ?? {});
  const me = sel.matchExpressions ?? [];
  if (ml.length === 0 && me.length === 0) return false;
  return (
    ml.every(([k, v]) => labels[k] === v) &&
    me.every((e) => {
      const has = Object.hasOwn(labels, e.key);
      switch (e.operator) {
        case "In":
          return has && (e.values ?? []).includes(labels[e.key]);
        case "NotIn":
          return !has || !(e.values ?? []).includes(labels[e.key]);
        case "Exists":
          return has;
        case "DoesNotExist":
          return !has;
        default:
          return false;
      }
    })
  );
}

export function checkResources(objs: K8sObject[]): string[] {
  const out: string[] = [];
  for (const w of workloads(objs)) {
    for (const c of containersOf(w)) {
      for (const part of ["requests", "limits"]) {
        for (const r of ["cpu", "memory"]) {
          if (c.resources?.[part]?.[r] === undefined) out.push(`${id(w)} container ${c.name}: no ${part}.${r}`);
        }
      }
    }
  }
  return out;
}

export function checkProbes(objs: K8sObject[]): string[] {
  const out: string[] = [];
  for (const w of workloads(objs)) {
    for (const c of w.spec.template.spec.containers ?? []) {
      const ports = c.ports ?? [];
      for (const kind of ["readinessProbe", "livenessProbe"]) {
        if (!c[kind]) out.push(`${id(w)} container ${c.name}: no ${kind}`);
      }
      for (const kind of ["startupProbe", "readinessProbe", "livenessProbe"]) {
        const probe = c[kind];
        if (!probe) continue;
        const target = probe.grpc?.port ?? probe.httpGet?.port ?? probe.tcpSocket?.port;
        if (target === undefined) {
          if (!probe.exec) out.push(`${id(w)} container ${c.name}: ${kind} has no handler`);
          continue;
        }
        const known = ports.some((p: any) => p.containerPort === target || p.name === target);
        if (!known) out.push(`${id(w)} container ${c.name}: ${kind} port ${target} is not a container port`);
      }
    }
  }
  return out;
}

export function checkSecurityContext(objs: K8sObject[]): string[] {
  const out: string[] = [];
  for (const w of workloads(objs)) {
    const pod = w.spec.template.spec.securityContext ?? {};
    for (const c of containersOf(w)) {
      const sc = c.securityContext ?? {};
      const where = `${id(w)} container ${c.name}`;
      if ((sc.runAsNonRoot ?? pod.runAsNonRoot) !== true) out.push(`${where}: runAsNonRoot is not true`);
      if ((sc.runAsUser ?? pod.runAsUser) === 0) out.push(`${where}: runs as uid 0`);
      if (sc.readOnlyRootFilesystem !== true) out.push(`${where}: readOnlyRootFilesystem is not true`);
      if (sc.allowPrivilegeEscalation !== false) out.push(`${where}: allowPrivilegeEscalation is not false`);
      if (!(sc.capabilities?.drop ?? []).includes("ALL")) out.push(`${where}: capabilities do not drop ALL`);
      if ((sc.seccompProfile ?? pod.seccompProfile)?.type !== "RuntimeDefault") out.push(`${where}: seccompProfile is not RuntimeDefault`);
    }
  }
  return out;
}

/** Every image names a registry path with an explicit tag (not latest) or a digest. */
export function checkImages(objs: K8sObject[]): string[] {
  const out: string[] = [];
  for (const w of workloads(objs)) {
    for (const c of containersOf(w)) {
      const image: string = c.image ?? "";
      if (/@sha256:[0-9a-f]{64}$/.test(image)) continue;
      const lastPart = image.split("/").pop() ?? "";
      const tag = lastPart.includes(":") ? lastPart.split(":").pop() : undefined;
      if (!tag) out.push(`${id(w)} container ${c.name}: image ${JSON.stringify(image)} has no tag`);
      else if (tag === "latest") out.push(`${id(w)} container ${c.name}: image ${image} uses latest`);
    }
  }
  return out;
}

export function secretRefs(objs: K8sObject[]): { name: string; key?: string; where: string }[] {
  const refs: { name: string; key?: string; where: string }[] = [];
  for (const w of workloads(objs)) {
    for (const c of containersOf(w)) {
      for (const e of c.env ?? []) {
        const r = e.valueFrom?.secretKeyRef;
        if (r) refs.push({ name: r.name, key: r.key, where: `${id(w)} ${c.name} ${e.name}` });
      }
      for (const e of c.envFrom ?? []) {
        if (e.secretRef) refs.push({ name: e.secretRef.name, where: `${id(w)} ${c.name} envFrom` });
      }
    }
  }
  return refs;
}

/** The runbook must say how to create every Secret key a pod reads. */
export function checkSecretsDocumented(objs: K8sObject[], readme: string): string[] {
  const out: string[] = [];
  for (const r of secretRefs(objs)) {
    if (!readme.includes(`\`${r.name}\``)) out.push(`${r.where}: Secret ${r.name} is not documented in deploy/README.md`);
    if (r.key && !readme.includes(`\`${r.key}\``)) out.push(`${r.where}: Secret key ${r.name}/${r.key} is not documented in deploy/README.md`);
  }
  return out;
}

/** Secret values never sit in plain env: names that look like credentials must use a Secret. */
export function checkNoInlineSecrets(objs: K8sObject[]): string[] {
  const out: string[] = [];
  for (const w of workloads(objs)) {
    for (const c of containersOf(w)) {
      for (const e of c.env ?? []) {
        if (/TOKEN|KEY|PASSWORD|SECRET|MONGODB_URL/i.test(e.name) && e.value !== undefined) {
          out.push(`${id(w)} container ${c.name}: ${e.name} has an inline value`);
        }
      }
    }
  }
  for (const cm of objs.filter((o) => o.kind === "ConfigMap")) {
    for (const k of Object.keys(cm.data ?? {})) {
      if (/TOKEN|KEY|PASSWORD|SECRET|MONGODB_URL/i.test(k)) out.push(`ConfigMap/${cm.metadata.name}: ${k} belongs in a Secret`);
    }
  }
  return out;
}

export function checkDisruptionAndNetwork(objs: K8sObject[]): string[] {
  const out: string[] = [];
  const pdbs = objs.filter((o) => o.kind === "PodDisruptionBudget");
  const policies = objs.filter((o) => o.kind === "NetworkPolicy");
  const all = workloads(objs);
  for (const w of all) {
    const labels = podLabels(w);
    if (!pdbs.some((p) => selects(p.spec?.selector, labels))) out.push(`${id(w)}: no PodDisruptionBudget selects its pods`);
    // Shared policies (DNS, metrics) select every workload; each one needs its own allow-list too.
    const own = policies.filter((p) => selects(p.spec?.podSelector, labels) && !all.every((x) => selects(p.spec?.podSelector, podLabels(x))));
    if (own.length === 0) out.push(`${id(w)}: no NetworkPolicy of its own selects its pods`);
  }
  const denyAll = policies.some(
    (p) => Object.keys(p.spec?.podSelector ?? {}).length === 0 && ["Ingress", "Egress"].every((t) => (p.spec?.policyTypes ?? []).includes(t)) && !p.spec?.ingress && !p.spec?.egress,
  );
  if (!denyAll) out.push("no default-deny NetworkPolicy for ingress and egress");
  return out;
}

/** Every Service selects a workload, and its target ports exist on that workload's containers. */
export function checkServices(objs: K8sObject[]): string[] {
  const out: string[] = [];
  for (const s of objs.filter((o) => o.kind === "Service")) {
    const targets = workloads(objs).filter((w) => selects({ matchLabels: s.spec?.selector }, podLabels(w)));
    if (targets.length === 0) {
      out.push(`Service/${s.metadata.name}: selects no workload`);
      continue;
    }
    for (const p of s.spec.ports ?? []) {
      const tp = p.targetPort ?? p.port;
      const ok = targets.every((w) => w.spec.template.spec.containers.some((c: any) => (c.ports ?? []).some((cp: any) => cp.containerPort === tp || cp.name === tp)));
      if (!ok) out.push(`Service/${s.metadata.name}: targetPort ${tp} is not a container port of its pods`);
    }
  }
  return out;
}

export function runAllPolicies(objs: K8sObject[], readme: string): string[] {
  return [
    ...checkResources(objs),
    ...checkProbes(objs),
    ...checkSecurityContext(objs),
    ...checkImages(objs),
    ...checkSecretsDocumented(objs, readme),
    ...checkNoInlineSecrets(objs),
    ...checkDisruptionAndNetwork(objs),
    ...checkServices(objs),
  ];
}
