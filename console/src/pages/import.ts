// Import: an NDJSON file to POST /api/articles/import, read back line by line
// (the answer streams while the upload goes on), with a report to download.
import { call } from "../api.js";
import { clear, field, h } from "../dom.js";
import { fmtNumber, t, tn } from "../i18n.js";
import { canWrite, heading, notice, readOnlyNote } from "../ui.js";

interface LineResult {
  line?: number;
  result: string;
  id?: string;
  status?: number;
  message?: string;
  imported?: number;
  failed?: number;
}

export function importPage(main: HTMLElement): void {
  main.append(heading(t("import.title")), h("p", null, t("import.intro")));
  if (!canWrite()) {
    main.append(readOnlyNote());
    return;
  }
  const file = h("input", { type: "file", id: "import-file", accept: ".ndjson,.jsonl,application/x-ndjson" });
  const audio = h("select", { id: "import-audio" }, ...["", "immediate", "onDemand"].map((v) => h("option", { value: v }, t(`import.audio.${v || "project"}` as Parameters<typeof t>[0]))));
  const progress = h("progress", { id: "import-progress", max: "1", value: "0", "aria-label": t("import.progress") });
  const status = h("p", { id: "import-status", role: "status", "aria-live": "polite" });
  const report = h("div", { id: "import-report" });
  const form = h(
    "form",
    {
      class: "import",
      onsubmit: async (e: Event) => {
        e.preventDefault();
        const f = file.files?.[0];
        if (!f) {
          clear(status, t("import.pickFile"));
          return;
        }
        const btn = form.querySelector("button") as HTMLButtonElement;
        btn.disabled = true;
        clear(report);
        const text = await f.text();
        const total = text.split(/\r?\n/).filter((l) => l.trim()).length;
        progress.max = Math.max(1, total);
        progress.value = 0;
        const fails: LineResult[] = [];
        let done = 0;
        let summary: LineResult | undefined;
        try {
          const res = await call<Response>("POST", `/api/articles/import${audio.value ? `?audio=${audio.value}` : ""}`, { raw: f, contentType: "application/x-ndjson", response: true });
          const reader = res.body!.pipeThrough(new TextDecoderStream()).getReader();
          let buf = "";
          for (;;) {
            const { value, done: end } = await reader.read();
            if (value) buf += value;
            let nl: number;
            while ((nl = buf.indexOf("\n")) >= 0) {
              const line = buf.slice(0, nl).trim();
              buf = buf.slice(nl + 1);
              if (!line) continue;
              const r = JSON.parse(line) as LineResult;
              if (r.line === undefined) summary = r;
              else {
                done++;
                if (r.result !== "ok") fails.push(r);
              }
            }
            progress.value = done;
            status.textContent = tn("import.progressText", total, { done: fmtNumber(done) });
            if (end) break;
          }
          if (buf.trim()) summary = JSON.parse(buf) as LineResult;
        } catch (err) {
          clear(report, notice(err));
          btn.disabled = false;
          return;
        }
        btn.disabled = false;
        if (!summary) {
          clear(report, notice(t("import.broken")));
          return;
        }
        status.textContent = t("import.done", { imported: summary.imported ?? 0, failed: summary.failed ?? 0 });
        if (fails.length) {
          const blob = new Blob([fails.map((x) => JSON.stringify(x)).join("\n") + "\n"], { type: "application/x-ndjson" });
          clear(
            report,
            h("h2", null, t("import.failures")),
            h("a", { class: "button", id: "import-download", href: URL.createObjectURL(blob), download: `import-errors-${f.name.replace(/\.[^.]*$/, "")}.ndjson` }, t("import.download")),
            h("div", { class: "table-wrap", tabindex: "0", role: "region", "aria-label": t("stats.tableOf", { title: t("import.failures") }) }, h(
              "table",
              null,
              h("caption", { class: "sr-only" }, t("import.failures")),
              h("thead", null, h("tr", null, h("th", { scope: "col" }, t("import.line")), h("th", { scope: "col" }, t("import.status")), h("th", { scope: "col" }, t("import.message")))),
              h("tbody", null, ...fails.slice(0, 1000).map((x) => h("tr", null, h("td", { class: "num" }, String(x.line)), h("td", { class: "num" }, String(x.status ?? "")), h("td", null, x.message ?? "")))),
            )),
          );
        }
      },
    },
    field(t("import.file"), file, t("import.fileHint")),
    field(t("import.audio"), audio),
    h("button", { type: "submit", class: "primary", id: "import-start" }, t("import.start")),
  );
  main.append(form, progress, status, report);
}
