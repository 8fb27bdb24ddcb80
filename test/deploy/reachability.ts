// What the rendered NetworkPolicies allow between two workloads of one namespace,
// following Kubernetes semantics: a pod is isolated in a direction once any policy of
// that type selects it, and then only the union of the policies' rules lets traffic through.
import type { K8sObject } from "./tools.js";

type Labels = Record<string, string>;
type Selector = { matchLabels?: Labels; matchExpressions?: { key: string; operator: string; values?: string[] }[] };

function matches(sel: Selector | undefined, labels: Labels): boolean {
  if (!sel) return true;
  const okLabels = Object.entries(sel.matchLabels ?? {}).every(([k, v]) => labels[k] === v);
  const okExpr = (sel.matchExpressions ?? []).every((e) => {
    const has = Object.hasOwn(labels, e.key);
    if (e.operator === "In") return has && (e.values ?? []).includes(labels[e.key]);
    if (e.operator === "NotIn") return !has || !(e.values ?? []).includes(labels[e.key]);
    if (e.operator === "Exists") return has;
    if (e.operator === "DoesNotExist") return !has;
    return false;
  });
  return okLabels && okExpr;
}

function peerMatches(peer: any, labels: Labels, namespace: string): boolean {
  if (peer.ipBlock) return false; // pod addresses are cluster-internal; our ipBlocks exclude private ranges
  if (peer.namespaceSelector && !matches(peer.namespaceSelector, { "kubernetes.io/metadata.name": namespace })) return false;
  return matches(peer.podSelector, labels);
}

function portMatches(ports: any[] | undefined, port: number): boolean {
  return !ports || ports.length === 0 || ports.some((p) => p.port === port && (p.protocol ?? "TCP") === "TCP");
}

function allowedOneSide(policies: K8sObject[], self: Labels, direction: "Ingress" | "Egress", peer: Labels, namespace: string, port: number): boolean {
  const selecting = policies.filter((p) => matches(p.spec?.podSelector ?? {}, self) && (p.spec?.policyTypes ?? ["Ingress"]).includes(direction));
  if (selecting.length === 0) return true;
  const key = direction === "Ingress" ? "ingress" : "egress";
  const peerKey = direction === "Ingress" ? "from" : "to";
  return selecting.some((p) =>
    (p.spec?.[key] ?? []).some((rule: any) => {
      const peers = rule[peerKey];
      const peerOk = !peers || peers.length === 0 || peers.some((x: any) => peerMatches(x, peer, namespace));
      return peerOk && portMatches(rule.ports, port);
    }),
  );
}

/** Whether pods labelled `from` may open TCP `port` on pods labelled `to` in `namespace`. */
export function allowed(objs: K8sObject[], namespace: string, from: Labels, to: Labels, port: number): boolean {
  const policies = objs.filter((o) => o.kind === "NetworkPolicy");
  return allowedOneSide(policies, from, "Egress", to, namespace, port) && allowedOneSide(policies, to, "Ingress", from, namespace, port);
}
