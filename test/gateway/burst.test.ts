import { expect } from "chai";
import { FULL, READ, startHarness, type Harness } from "./support.js";

type Req = { method: string; path: string; headers?: Record<string, string>; body?: string };

function mixedRequests(n: number, seededId: string): Req[] {
  const json = { "content-type": "application/json" };
  const kinds: ((i: number) => Req)[] = [
    (i) => ({ method: "POST", path: "/api/articles", headers: { ...FULL, ...json }, body: JSON.stringify({ title: `B${i}`, text: "t", labels: ["x"] }) }),
    () => ({ method: "POST", path: "/api/articles", headers: { ...FULL, ...json }, body: '{"title": ' }),
    () => ({ method: "POST", path: "/api/articles", headers: { ...FULL, ...json }, body: JSON.stringify({ title: "x", text: "y", voice: "onyx" }) }),
    () => ({ method: "POST", path: "/api/articles", headers: { ...FULL, "content-type": "text/xml" }, body: "<a/>" }),
    () => ({ method: "POST", path: "/api/articles", headers: { ...READ, ...json }, body: JSON.stringify({ title: "x", text: "y" }) }),
    () => ({ method: "GET", path: "/api/articles?limit=20", headers: READ }),
    () => ({ method: "GET", path: "/api/articles?limit=7", headers: READ }),
    () => ({ method: "GET", path: "/api/articles?offset=%ZZ&limit=%", headers: READ }),
    () => ({ method: "GET", path: `/api/articles/${seededId}`, headers: READ }),
    () => ({ method: "GET", path: "/api/articles/%E0%A4%A", headers: READ }),
    () => ({ method: "GET", path: "/api/articles/x", headers: { authorization: "Bearer" } }),
    () => ({ method: "GET", path: "/api/articles/x" }),
    () => ({ method: "PUT", path: `/api/articles/${seededId}`, headers: { ...FULL, ...json }, body: JSON.stringify({ title: "u", text: "v", prompt: null }) }),
    () => ({ method: "PUT", path: `/api/articles/${seededId}`, headers: { ...FULL, ...json }, body: "null" }),
    () => ({ method: "DELETE", path: "/api/articles/unknown", headers: FULL }),
    () => ({ method: "GET", path: "/api/articles_external_url/%%%", headers: READ }),
    () => ({ method: "GET", path: "/api/articles_external_url/https%3A%2F%2Fa.example%2Fb", headers: READ }),
    () => ({ method: "PATCH", path: "/api", headers: FULL }),
    () => ({ method: "GET", path: "/nope/../../etc/passwd" }),
    () => ({ method: "GET", path: "/audio/../../x" }),
    () => ({ method: "GET", path: "/api" }),
    () => ({ method: "POST", path: "/api/articles", headers: { ...FULL, ...json }, body: '{"title":"x","text":"y","__proto__":{"admin":true},"constructor":1}' }),
  ];
  return Array.from({ length: n }, (_, i) => kinds[i % kinds.length](i));
}

describe("gateway: burst of mixed requests", function () {
  let h: Harness;
  before(async () => {
    h = await startHarness();
  });
  after(async () => {
    await h.close();
  });

  it("300 concurrent valid/invalid/malformed requests: no 5xx, only JSON errors, process stays up", async () => {
    const seeded = h.fake.seed({}).id;
    const requests = mixedRequests(300, seeded);
    const started = Date.now();
    const results = await Promise.all(
      requests.map(async (r) => {
        const res = await fetch(h.url(r.path), { method: r.method, headers: r.headers, body: r.body, redirect: "manual" });
        const text = await res.text();
        return { r, status: res.status, type: res.headers.get("content-type") ?? "", text };
      }),
    );
    const ms = Date.now() - started;
    const fives = results.filter((x) => x.status >= 500);
    expect(fives.map((x) => `${x.r.method} ${x.r.path} → ${x.status} ${x.text}`)).to.deep.equal([]);
    for (const x of results.filter((y) => y.status >= 400)) {
      expect(x.type, `${x.r.method} ${x.r.path}`).to.match(/^application\/json/);
      expect(JSON.parse(x.text).result, `${x.r.method} ${x.r.path}`).to.equal("fail");
    }
    const created = results.filter((x) => x.r.method === "POST" && x.status === 200).length;
    expect(created).to.be.greaterThan(0);
    expect([...h.fake.articles.values()].some((a) => (a as unknown as { admin?: boolean }).admin)).to.equal(false);
    expect((await fetch(h.url("/livez"))).status).to.equal(200);
    const statuses = results.reduce<Record<number, number>>((acc, x) => ({ ...acc, [x.status]: (acc[x.status] ?? 0) + 1 }), {});
    console.log(`      300 mixed requests in ${ms} ms; statuses ${JSON.stringify(statuses)}`);
  });
});
