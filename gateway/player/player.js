/* article-audio-player: the platform's embeddable audio player (v1).
 * <script src="{base}/player/v1/player.js" async></script>
 * <article-audio-player key="pk_…" article-url="https://…"></article-audio-player>
 * No framework, no globals besides the element; styles live in its shadow root.
 * stats="off": no listening events; source="embed"|"console": where it runs, for the statistics'
 * split by source (default: the publisher's page); audio="preview": the preview file.
 * Quartiles and completion count the seconds heard (the element's played ranges), not the playhead.
 * The project's look (console "Player design") comes with the lookup; look='{…}' overrides it (the
 * designer's live preview). The page's own CSS custom properties and ::part rules still win.
 * Read along: where the page holds the article's text, the sentence being read is highlighted
 * (CSS Custom Highlight API, the page's DOM untouched) and each paragraph gets "play from here".
 */
(() => {
  "use strict";
  const TAG = "article-audio-player";
  if (!window.customElements || customElements.get(TAG)) return;

  // The API lives where this script came from (captured while it runs).
  const SCRIPT = document.currentScript && document.currentScript.src;
  const DEFAULT_BASE = SCRIPT ? new URL(SCRIPT).origin : location.origin;
  const SPEEDS = [0.75, 1, 1.25, 1.5, 1.75, 2];
  const FLUSH_MS = 10000;
  const MARKS = [25, 50, 75];
  // Heard this share of the full file: complete (a last sentence skipped still counts).
  const COMPLETE_SHARE = 0.95;
  const SOURCES = ["player", "embed", "console"];
  // Audio on demand: while it is being made the lookup is repeated, often until the preview is
  // there (it takes a second or two), then once a second, for at most three minutes.
  const FOLLOW_PREVIEW_MS = 250;
  const FOLLOW_MS = 1000;
  const FOLLOW_FOR_MS = 180000;
  const NOT_YET_TRIES = 10;
  // Texts per language (gateway/player/messages/*.json, inlined when served).
  const MESSAGES = {/*messages*/};
  const HL = "article-audio-player";
  // Where the article's text may sit on the page: paragraphs, headings, list items, quotes.
  const BLOCKS = "p,h1,h2,h3,h4,h5,h6,li,blockquote,figcaption,dd";

  const STYLE = `
:host{display:block;font:var(--aap-font,14px/1.4 system-ui,-apple-system,"Segoe UI",Roboto,sans-serif);color:var(--aap-fg,#1d1d1f)}
:host([hidden]){display:none}
.box{display:flex;flex-wrap:wrap;align-items:center;gap:.6em;padding:.6em .8em;background:var(--aap-bg,#f4f4f6);border-radius:var(--aap-radius,12px);border:1px solid var(--aap-border,rgba(0,0,0,.08))}
button{all:unset;box-sizing:border-box;display:inline-flex;align-items:center;justify-content:center;min-width:44px;min-height:44px;padding:0 .5em;border-radius:999px;cursor:pointer;color:inherit;font:inherit;font-weight:600;transition:background-color .15s,filter .15s}
button:hover{background:rgba(127,127,127,.15)}
button:focus-visible,input:focus-visible{outline:3px solid var(--aap-focus,#1a73e8);outline-offset:2px}
.play{background:var(--aap-accent,#1a73e8);color:var(--aap-on-accent,#fff)}
.play:hover{background:var(--aap-accent,#1a73e8);filter:brightness(1.1)}
.play svg{width:1.1em;height:1.1em;fill:currentColor}
.main{flex:1;min-width:0;display:flex;flex-direction:column}
.title{white-space:nowrap;overflow:hidden;text-overflow:ellipsis;font-weight:600}
.row{display:flex;align-items:center;gap:.6em}
input[type=range]{flex:1;min-width:4em;height:44px;accent-color:var(--aap-accent,#1a73e8);margin:0;background:none}
.time{font-variant-numeric:tabular-nums;font-size:.85em;white-space:nowrap}
.speed{font-size:.85em}
.tools{flex-basis:100%;display:flex;flex-wrap:wrap;gap:.4em}
.tools button{font-size:.85em;font-weight:500;border:1px solid currentColor}
.tools [aria-pressed=true]{background:var(--aap-accent,#1a73e8);color:var(--aap-on-accent,#fff);border-color:transparent}
.sr{position:absolute;width:1px;height:1px;overflow:hidden;clip-path:inset(50%);white-space:nowrap}
@media (prefers-color-scheme:dark){:host{color:var(--aap-fg,#f2f2f7)}.box{background:var(--aap-bg,#1f1f24);border-color:var(--aap-border,rgba(255,255,255,.12))}.play,.tools [aria-pressed=true]{background:var(--aap-accent,#8ab4f8);color:var(--aap-on-accent,#101014)}input[type=range]{accent-color:var(--aap-accent,#8ab4f8)}button:focus-visible,input:focus-visible{outline-color:var(--aap-focus,#8ab4f8)}}
@media (prefers-reduced-motion:reduce){*{transition:none!important;animation:none!important}}
`;
  const PLAY = '<svg viewBox="0 0 24 24" aria-hidden="true"><path d="M8 5v14l11-7z"/></svg>';
  const PAUSE = '<svg viewBox="0 0 24 24" aria-hidden="true"><path d="M6 5h4v14H6zM14 5h4v14h-4z"/></svg>';

  // Seconds covered by a media element's played ranges: each heard once, however often replayed.
  const heard = (ranges) => {
    let n = 0;
    for (let i = 0; i < ranges.length; i++) n += ranges.end(i) - ranges.start(i);
    return n;
  };
  const clock = (s) => {
    if (!isFinite(s) || s < 0) s = 0;
    s = Math.floor(s);
    const h = Math.floor(s / 3600), m = Math.floor((s % 3600) / 60), sec = String(s % 60).padStart(2, "0");
    return h ? `${h}:${String(m).padStart(2, "0")}:${sec}` : `${m}:${sec}`;
  };
  // The listener's language: the element's (or its nearest ancestor's, or the page's) `lang`, else
  // the article's, else English; the first of them there are messages for.
  const language = (el, article) => {
    const near = el.closest("[lang]");
    for (const tag of [near && near.lang, document.documentElement.lang, article.lang]) {
      const l = (tag || "").toLowerCase().split(/[-_]/)[0];
      if (MESSAGES[l]) return l;
    }
    return "en";
  };
  const fill = (text, vars) => text.replace(/\{(\w+)\}/g, (_, k) => vars[k]);

  // Text compared as letters and digits only, lower case, without accents: whitespace, quotes and
  // other punctuation differ between a page and the article's text, the words do not.
  const folded = new Map();
  const fold1 = (c) => {
    let f = folded.get(c);
    if (f === undefined) folded.set(c, (f = c.normalize("NFKD").toLowerCase().replace(/[^\p{L}\p{N}]/gu, "")));
    return f;
  };
  const PUNCT = /[^\s\p{L}\p{N}]/u;
  const fold = (s) => { let o = ""; for (const c of s) o += fold1(c); return o; };
  // An element's folded text, and for each of its characters the text node and offset it came from.
  const textMap = (el) => {
    const walk = document.createTreeWalker(el, NodeFilter.SHOW_TEXT), at = [];
    let s = "";
    for (let n; (n = walk.nextNode()); ) {
      let i = 0;
      for (const c of n.data) {
        for (const f of fold1(c)) { s += f; at.push([n, i, c.length]); }
        i += c.length;
      }
    }
    return { s, at };
  };
  // The sentences' ranges in an element, in order; a sentence not found is left out.
  const sentenceRanges = (el, seg) => {
    const { s, at } = textMap(el), out = [];
    let from = 0;
    for (const sen of seg.sentences || []) {
      const f = fold(sen.text || ""), i = f ? s.indexOf(f, from) : -1;
      if (i < 0) continue;
      from = i + f.length;
      const [n0, o0] = at[i], [n1, o1, len] = at[from - 1], r = document.createRange();
      let begin = o0, end = o1 + len;
      // Its quotes and closing punctuation belong to the sentence.
      while (begin > 0 && PUNCT.test(n0.data[begin - 1])) begin--;
      while (end < n1.data.length && PUNCT.test(n1.data[end])) end++;
      r.setStart(n0, begin);
      r.setEnd(n1, end);
      out.push({ start: +sen.start, end: +sen.end, range: r });
    }
    return out;
  };
  // Segment paragraphs (and the title) found on the page, by their text.
  const findText = (root, segments) => {
    const byText = new Map(), used = new Set(), found = [];
    for (const el of root.querySelectorAll(BLOCKS)) {
      const f = fold(el.textContent);
      if (f) byText.has(f) ? byText.get(f).push(el) : byText.set(f, [el]);
    }
    for (const seg of segments) {
      const els = byText.get(fold(seg.text || "")), el = els && els.find((e) => !used.has(e));
      if (el) { used.add(el); found.push({ seg, el }); }
    }
    return found.some((f) => f.seg.kind === "paragraph") ? found : [];
  };
  // Shadow styles as constructable sheets (one per text, shared by every player): a page whose CSP
  // refuses inline styles (the publisher console's) still styles them. Where a browser cannot adopt
  // sheets, the returned <style> goes into the markup instead.
  const sheets = new Map();
  const styled = (root, css) => {
    if (!("adoptedStyleSheets" in root)) return `<style>${css}</style>`;
    let s = sheets.get(css);
    if (!s) {
      try { s = new CSSStyleSheet(); s.replaceSync(css); } catch (e) { return `<style>${css}</style>`; }
      sheets.set(css, s);
    }
    root.adoptedStyleSheets = [s];
    return "";
  };
  // The project's look as CSS: custom properties on the host (below the page's own rules), the
  // compact layout and the hidden controls. Only well-formed values pass: the look may come from an attribute.
  const LOOK_VALUE = /^(#[0-9a-f]{6}|\d{1,2}px)$/i;
  const lookCss = (look) => {
    if (!look || typeof look !== "object") return "";
    const vars = Object.entries(look.vars || {}).filter(([k, v]) => /^--aap-[a-z-]+$/.test(k) && LOOK_VALUE.test(v)).map(([k, v]) => `${k}:${v}`);
    const hide = ["seek", "time", "back", "speed"].filter((c) => (look.hide || []).includes(c)).map((c) => `.${c}`);
    return (vars.length ? `:host{${vars.join(";")}}` : "") + (look.layout === "compact" ? ".title{display:none}.box{padding:.3em .5em}" : "") + (hide.length ? `${hide.join(",")}{display:none}` : "");
  };
  let sheet;
  // The highlight's look, on the page (adopted, so no element is added; in a layer, so a publisher's
  // own ::highlight(article-audio-player) rule wins).
  const highlightStyle = () => {
    if (sheet || !document.adoptedStyleSheets) return;
    sheet = new CSSStyleSheet();
    sheet.replaceSync(`@layer article-audio-player{::highlight(${HL}){background-color:Mark;color:MarkText}}`);
    document.adoptedStyleSheets = [sheet, ...document.adoptedStyleSheets];
  };
  const OVERLAY_STYLE = `
:host{all:initial!important;position:absolute!important;top:0!important;left:0!important;z-index:2147483000!important}
button{all:unset;position:absolute;top:0;left:0;box-sizing:border-box;width:44px;height:44px;border-radius:50%;display:flex;align-items:center;justify-content:center;cursor:pointer;background:var(--aap-accent,#1a73e8);color:var(--aap-on-accent,#fff);opacity:0;pointer-events:none;transition:opacity .15s}
button svg{width:20px;height:20px;fill:currentColor}
button[hidden]{display:none}
button:hover,button:focus,button.on{opacity:1;pointer-events:auto}
button:focus-visible{outline:3px solid var(--aap-focus,#1a73e8);outline-offset:2px}
@media (prefers-reduced-motion:reduce){button{transition:none}}
`;

  class ArticleAudioPlayer extends HTMLElement {
    static get observedAttributes() { return ["key", "article-id", "external-id", "article-url", "base", "lang", "highlight", "read-along", "article-text", "audio", "look"]; }

    constructor() {
      super();
      this._root = this.attachShadow({ mode: "open" });
      this._events = [];
      this._marks = new Set();
      this._seconds = 0;
      this._loadSeq = 0;
    }

    connectedCallback() {
      this._on = true;
      this._onHide = () => { if (document.visibilityState === "hidden") this._flush(); };
      this._onLeave = () => this._flush();
      document.addEventListener("visibilitychange", this._onHide);
      window.addEventListener("pagehide", this._onLeave);
      this._load();
    }

    disconnectedCallback() {
      this._on = false;
      document.removeEventListener("visibilitychange", this._onHide);
      window.removeEventListener("pagehide", this._onLeave);
      clearInterval(this._timer);
      clearTimeout(this._follow);
      this._stopReading();
      this._flush();
    }

    // Not before connectedCallback: an element upgraded when the script arrives gets this call for
    // each of its attributes first, and one lookup is enough.
    attributeChangedCallback(name, before, after) {
      if (before === after || !this._on) return;
      // A new look restyles what is shown: no new lookup.
      if (name === "look") return void (this._article && styled(this._root, this._style()));
      this._load();
    }

    _style() {
      let look = this._article && this._article.look;
      try { if (this.hasAttribute("look")) look = JSON.parse(this.getAttribute("look")); } catch (e) { /* a malformed attribute: the project's look */ }
      return STYLE + lookCss(look);
    }

    // Plays where listening must not count (an editor checking the audio) send nothing.
    get _quiet() { return this.getAttribute("stats") === "off"; }

    get _base() { return (this.getAttribute("base") || DEFAULT_BASE).replace(/\/+$/, ""); }

    _lookup() {
      const id = this.getAttribute("article-id"), ext = this.getAttribute("external-id");
      if (id) return ["id", id];
      if (ext) return ["externalId", ext];
      const canonical = document.querySelector('link[rel="canonical"]');
      return ["url", this.getAttribute("article-url") || (canonical && canonical.href) || location.href];
    }

    async _load() {
      const seq = ++this._loadSeq;
      const key = this.getAttribute("key");
      if (!key) return this._nothing("the key attribute (the project's public player key) is missing");
      const [field, value] = this._lookup();
      const q = new URLSearchParams({ key, [field]: value });
      const url = `${this._base}/player/v1/article?${q}`;
      let article;
      try {
        const res = await fetch(url, { credentials: "omit", mode: "cors" });
        if (seq !== this._loadSeq) return;
        if (res.status === 429) return this._notYet(seq, Number(res.headers.get("Retry-After")));
        if (!res.ok) return this._nothing(res.status === 404 ? `no ready audio for ${field} ${value}` : `lookup failed (${res.status})`);
        article = (await res.json()).article;
      } catch (e) {
        if (seq === this._loadSeq) this._nothing(`lookup failed (${e && e.message})`);
        return;
      }
      if (seq !== this._loadSeq) return;
      if (!article || !(article.audio || article.pending)) return this._nothing(`no ready audio for ${field} ${value}`);
      this._render(key, article);
      if (article.pending) this._followUp(seq, url, Date.now() + FOLLOW_FOR_MS);
    }

    // The audio is being made (on demand): look again until the preview, then the full file, is there.
    _followUp(seq, url, until) {
      clearTimeout(this._follow);
      if (Date.now() >= until) return;
      this._follow = setTimeout(async () => {
        if (seq !== this._loadSeq || !this.isConnected) return;
        let a;
        try {
          const res = await fetch(url, { credentials: "omit", mode: "cors" });
          if (res.ok) a = (await res.json()).article;
        } catch (e) {
          // A failed look is one of the bounded number; the next may succeed.
        }
        if (seq !== this._loadSeq) return;
        if (a && a.id === this._article.id) this._advance(a);
        if (!a || a.pending) this._followUp(seq, url, until);
      }, this._src ? FOLLOW_MS : FOLLOW_PREVIEW_MS);
    }

    // Preview first, then the full file, from where the listener is: the preview is its opening.
    _advance(a) {
      this._article = a;
      this._readAlong(a);
      const audio = this._audio;
      // The live stream is the full file's opening as it is made: kept until the full file once it has
      // begun, unless it ended first (its rest is queued): then the preview, from the same place.
      const next = (!this._preview && a.audio) || (this._live && audio.readyState && !this._outran ? this._src : a.audio_preview);
      if (!next || next === this._src) return;
      const at = audio.currentTime;
      const resume = this._wantPlay || !audio.paused || this._outran;
      this._wantPlay = this._outran = false;
      this._live = false;
      this._src = audio.src = next;
      if (at > 0) audio.addEventListener("loadedmetadata", () => { audio.currentTime = at; }, { once: true });
      if (resume) audio.play().catch(() => {});
    }

    // Audio on demand that cannot be started now (the project's budget for listeners is used up, or
    // too many lookups from this address): say so, and look again later, a bounded number of times.
    _notYet(seq, retryAfter) {
      this._stopReading();
      this.hidden = false;
      const m = MESSAGES[language(this, {})] || {};
      this._root.innerHTML = `${styled(this._root, STYLE)}<div class="box" part="container" role="status"></div>`;
      this._root.querySelector(".box").textContent = m.notYet || "Audio not available yet";
      this._notYetTries = (this._notYetTries || 0) + 1;
      if (this._notYetTries > NOT_YET_TRIES) return;
      const wait = Math.min(300, Math.max(10, isFinite(retryAfter) ? retryAfter : 60)) * 1000;
      clearTimeout(this._follow);
      this._follow = setTimeout(() => {
        if (seq === this._loadSeq && this.isConnected) this._load();
      }, wait);
    }

    _nothing(why) {
      this._stopReading();
      this.hidden = true;
      this._root.innerHTML = "";
      if (!this._warned) {
        this._warned = true;
        console.warn(`<${TAG}>: showing nothing: ${why}`);
      }
    }

    _render(key, a) {
      this._stopReading();
      this.hidden = false;
      this._key = key;
      this._article = a;
      const preview = (this._preview = this.getAttribute("audio") === "preview");
      const lang = language(this, a), m = (this._m = MESSAGES[lang] || {});
      const num = (o) => new Intl.NumberFormat(lang, o);
      const units = [num({ style: "unit", unit: "minute", unitDisplay: "long" }), num({ style: "unit", unit: "second", unitDisplay: "long" })];
      const rate = num({ maximumFractionDigits: 2 });
      const spoken = (s) => {
        s = Math.floor(isFinite(s) ? s : 0);
        const min = Math.floor(s / 60), sec = units[1].format(s % 60);
        return min ? `${units[0].format(min)} ${sec}` : sec;
      };
      this._root.innerHTML = `${styled(this._root, this._style())}
<div class="box" part="container" role="region" lang="${lang}">
  <button class="play" part="play-button" type="button">${PLAY}</button>
  <div class="main">
    <div class="title" part="title"></div>
    <div class="row">
      <input class="seek" part="progress" type="range" min="0" max="0" step="1" value="0">
      <span class="time" part="time" aria-hidden="true">0:00 / 0:00</span>
    </div>
  </div>
  <button class="back" part="skip-button" type="button">−15</button>
  <button class="speed" part="speed-button" type="button">1×</button>
  <span class="sr" role="status"></span>
  <audio preload="metadata"></audio>
</div>`;
      const $ = (s) => this._root.querySelector(s);
      const box = $(".box"), play = $(".play"), seek = $(".seek"), time = $(".time"), speed = $(".speed"), back = $(".back");
      const audio = (this._audio = $("audio"));
      box.setAttribute("aria-label", fill(preview ? m.previewRegion : m.region, { title: a.title }));
      play.setAttribute("aria-label", m.play);
      back.setAttribute("aria-label", m.back);
      seek.setAttribute("aria-label", m.seek);
      $(".title").textContent = a.title;
      this._src = (!preview && a.audio) || a.audio_preview || "";
      // Made on demand and nothing to play yet: the audio as it is made, so the first words come in seconds.
      this._live = !this._src && !preview && !!a.audio_live;
      if (this._live) this._src = a.audio_live;
      if (this._src) audio.src = this._src;
      audio.addEventListener("error", () => {
        // No live stream after all (a cloud voice, or none made in time): the files, as they come.
        if (!this._live) return;
        this._wantPlay = this._wantPlay || !audio.paused;
        this._live = false;
        this._src = "";
        if (this._article.audio_preview || this._article.audio) this._advance(this._article);
      });
      const duration = () => (isFinite(audio.duration) && audio.duration > 0 ? audio.duration : (preview ? a.audio_preview_duration : a.audio_duration) || 0);
      const paint = () => {
        const d = duration();
        seek.max = String(Math.round(d));
        seek.value = String(Math.floor(audio.currentTime));
        seek.setAttribute("aria-valuetext", fill(m.position, { time: spoken(audio.currentTime), duration: spoken(d) }));
        time.textContent = `${clock(audio.currentTime)} / ${clock(d)}`;
      };
      const setSpeed = (r) => {
        audio.playbackRate = r;
        speed.textContent = `${rate.format(r)}×`;
        speed.setAttribute("aria-label", fill(m.speed, { rate: speed.textContent }));
      };
      setSpeed(1);
      paint();

      play.addEventListener("click", () => {
        // Nothing to play yet (audio on demand): it starts as soon as the preview is there.
        if (!this._src) return void (this._wantPlay = !this._wantPlay);
        // A live stream can still fail before it begins: the files then start if play was pressed.
        if (this._live) this._wantPlay = audio.paused;
        audio.paused ? audio.play().catch(() => {}) : audio.pause();
      });
      back.addEventListener("click", () => { audio.currentTime = Math.max(0, audio.currentTime - 15); paint(); });
      speed.addEventListener("click", () => setSpeed(SPEEDS[(SPEEDS.indexOf(audio.playbackRate) + 1) % SPEEDS.length]));
      seek.addEventListener("input", () => { audio.currentTime = Number(seek.value); paint(); });
      audio.addEventListener("loadedmetadata", paint);
      audio.addEventListener("play", () => {
        play.innerHTML = PAUSE;
        play.setAttribute("aria-label", m.pause);
        if (!this._played) { this._played = true; this._event("play"); }
      });
      audio.addEventListener("pause", () => { play.innerHTML = PLAY; play.setAttribute("aria-label", m.play); this._flush(); });
      let last = 0;
      audio.addEventListener("timeupdate", () => {
        const t = audio.currentTime, step = t - last;
        last = t;
        // Only time actually played counts, not jumps made by seeking.
        if (!audio.paused && step > 0 && step < 2) this._seconds += step;
        const d = duration();
        // Marks count what was heard of the full file only, not the preview that plays first.
        if (d > 0 && !this._article.pending && !preview) this._marksHeard(heard(audio.played) / d);
        paint();
      });
      audio.addEventListener("seeked", () => { last = audio.currentTime; });
      audio.addEventListener("ended", () => {
        // The preview ran out before the rest was made: it continues when the full file comes.
        if (this._article.pending && !preview) return void (this._outran = true);
        if (preview) return this._flush();
        const d = duration();
        if (d > 0) this._marksHeard(heard(audio.played) / d);
        this._flush();
      });
      clearInterval(this._timer);
      this._timer = setInterval(() => this._flush(), FLUSH_MS);
      this._event("impression");
      this._readAlong(a);
    }

    // Once per load, as soon as the article is ready with its timed segments (at once, or when audio
    // made on demand is done).
    _readAlong(a) {
      if (!a.segments || !a.audio || this._preview || this._readSeq === this._loadSeq || this.getAttribute("read-along") === "off") return;
      this._readSeq = this._loadSeq;
      this._read(a);
    }

    _stopReading() {
      if (this._reading) this._reading();
      this._reading = null;
    }

    // Read along: the article's timed segments against the text on the page.
    async _read(a) {
      const seq = this._loadSeq;
      let segments;
      try {
        const res = await fetch(a.segments, { credentials: "omit", mode: "cors" });
        segments = res.ok && (await res.json()).segments;
      } catch (e) {
        // No read-along then; the player works as before.
      }
      if (document.readyState === "loading") await new Promise((r) => document.addEventListener("DOMContentLoaded", r, { once: true }));
      if (seq !== this._loadSeq || !this.isConnected || !Array.isArray(segments)) return;
      const sel = this.getAttribute("article-text");
      let root = document.body;
      try { root = (sel && document.querySelector(sel)) || root; } catch (e) { /* not a selector: the whole page */ }
      const found = findText(root, segments);
      if (!found.length) return;
      const m = this._m, audio = this._audio, stops = [];
      const on = (target, type, fn, opts) => { target.addEventListener(type, fn, opts); stops.push(() => target.removeEventListener(type, fn, opts)); };
      this._reading = () => stops.forEach((f) => f());
      const status = this._root.querySelector(".sr");
      const words = (t) => { const w = t.split(/\s+/); return w.slice(0, 6).join(" ") + (w.length > 6 ? "…" : ""); };

      // Sentences in time order, each with its range on the page.
      const sentences = found.flatMap(({ seg, el }) => sentenceRanges(el, seg)).sort((x, y) => x.start - y.start);
      const canHighlight = !!(window.Highlight && CSS.highlights) && this.getAttribute("highlight") !== "off";
      const reduce = matchMedia("(prefers-reduced-motion: reduce)");
      let highlight = canHighlight, follow = false, current = -1, frame = 0;
      const hl = canHighlight && new Highlight();
      if (hl) { highlightStyle(); CSS.highlights.set(HL, hl); stops.push(() => CSS.highlights.get(HL) === hl && CSS.highlights.delete(HL)); }
      const show = (scroll) => {
        const s = sentences[current];
        if (hl) { hl.clear(); if (s && highlight) hl.add(s.range); }
        if (s && follow && scroll) {
          const r = s.range.getBoundingClientRect();
          if (r.top < 0 || r.bottom > innerHeight) scrollBy({ top: r.top - innerHeight / 3, behavior: reduce.matches ? "auto" : "smooth" });
        }
      };
      const update = () => {
        const t = audio.currentTime;
        let lo = 0, hi = sentences.length;
        while (lo < hi) { const mid = (lo + hi) >> 1; sentences[mid].start <= t ? (lo = mid + 1) : (hi = mid); }
        // The last sentence begun, until a second past its end (pauses between sentences).
        const k = lo - 1, next = k >= 0 && t < sentences[k].end + 1 ? k : -1;
        if (next !== current) { current = next; show(true); }
      };
      const tick = () => { update(); frame = audio.paused ? 0 : requestAnimationFrame(tick); };
      on(audio, "timeupdate", update);
      on(audio, "play", () => { if (!frame) frame = requestAnimationFrame(tick); });
      stops.push(() => cancelAnimationFrame(frame));
      update();

      // The listener's switches, in the player.
      const tools = document.createElement("div");
      tools.className = "tools";
      const toggle = (label, pressed, set) => {
        const b = document.createElement("button");
        b.type = "button";
        b.textContent = label;
        b.setAttribute("aria-pressed", pressed);
        b.addEventListener("click", () => { const v = b.getAttribute("aria-pressed") !== "true"; b.setAttribute("aria-pressed", v); set(v); });
        tools.append(b);
      };
      if (canHighlight) toggle(m.highlight, true, (v) => { highlight = v; show(false); });
      toggle(m.follow, false, (v) => { follow = v; show(true); });
      this._root.querySelector(".box").insertBefore(tools, status);
      stops.push(() => tools.remove());

      // "Play from here": one overlay beside the page's paragraphs, never inside them.
      const overlay = document.createElement("article-audio-read-along");
      const shadow = overlay.attachShadow({ mode: "open" });
      shadow.innerHTML = `${styled(shadow, OVERLAY_STYLE)}<div role="region"></div>`;
      const region = shadow.querySelector("div");
      region.setAttribute("aria-label", m.readAlong);
      region.lang = this._root.querySelector(".box").lang;
      const buttons = new Map();
      for (const { seg, el } of found) {
        if (seg.kind !== "paragraph") continue;
        const b = document.createElement("button");
        b.type = "button";
        b.innerHTML = PLAY;
        b.setAttribute("aria-label", fill(m.fromHere, { start: words(seg.text) }));
        b.addEventListener("click", () => {
          if (this._src !== a.audio) this._src = audio.src = a.audio;
          audio.currentTime = +seg.start;
          audio.play().catch(() => {});
          status.textContent = fill(m.playingFrom, { start: words(seg.text) });
        });
        b.rtl = getComputedStyle(el).direction === "rtl";
        buttons.set(el, b);
        region.append(b);
      }
      document.body.append(overlay);
      stops.push(() => overlay.remove());
      let placing = 0;
      const place = () => {
        placing = 0;
        const o = overlay.getBoundingClientRect(), w = document.documentElement.clientWidth;
        // Read every position first, then move: one layout per frame.
        const at = [...buttons].map(([el, b]) => [b, el.getBoundingClientRect()]);
        for (const [b, r] of at) {
          // In the margin before the paragraph (left, or right in right-to-left text) where there is
          // room, else over its top end corner.
          const x = b.rtl ? (r.right + 52 <= w ? r.right + 8 : Math.max(0, r.left)) : r.left >= 52 ? r.left - 52 : Math.max(0, Math.min(r.right, w) - 44);
          b.style.transform = `translate(${Math.round(x - o.left)}px,${Math.round(r.top - o.top)}px)`;
          b.hidden = !r.height;
        }
      };
      const later = () => { if (!placing) placing = requestAnimationFrame(place); };
      place();
      on(window, "resize", later, { passive: true });
      on(document, "scroll", later, { passive: true, capture: true });
      on(window, "load", later);
      const sizes = new ResizeObserver(later);
      sizes.observe(document.body);
      stops.push(() => { sizes.disconnect(); cancelAnimationFrame(placing); });
      // A paragraph under the pointer (or tapped) shows its button, which stays while the pointer is on
      // it; hidden, it takes no clicks, so a tap on the text never starts playback by surprise.
      let shown;
      on(document, "pointerover", (e) => {
        let n = e.target;
        if (n === overlay) return;
        while (n && !buttons.has(n)) n = n.parentNode;
        const b = n && buttons.get(n);
        if (b === shown) return;
        if (shown) shown.classList.remove("on");
        if ((shown = b)) b.classList.add("on");
      }, { passive: true });
    }

    _marksHeard(share) {
      for (const m of MARKS) if (!this._marks.has(m) && share >= m / 100) { this._marks.add(m); this._event("progress", { percent: m }); }
      if (!this._marks.has(100) && share >= COMPLETE_SHARE) { this._marks.add(100); this._event("complete"); }
    }

    _event(type, extra) {
      if (!this._article || this._quiet) return;
      this._events.push(Object.assign({ type, articleId: this._article.id }, extra));
      if (type !== "impression" && type !== "progress") this._flush();
    }

    _flush() {
      if (!this._key || !this._article) return;
      if (this._quiet) return void (this._seconds = 0);
      const seconds = Math.round(this._seconds * 10) / 10;
      if (seconds > 0) {
        // Listening time rides on the last queued event, or on a "listen" event of its own.
        if (!this._events.length) this._events.push({ type: "listen", articleId: this._article.id });
        this._events[this._events.length - 1].seconds = Math.min(600, seconds);
        this._seconds = 0;
      }
      if (!this._events.length) return;
      const source = this.getAttribute("source");
      const body = JSON.stringify(Object.assign({ key: this._key, events: this._events.splice(0, 50) }, SOURCES.includes(source) && source !== "player" ? { source } : {}));
      const url = `${this._base}/player/v1/events`;
      const blob = new Blob([body], { type: "text/plain" });
      if (!(navigator.sendBeacon && navigator.sendBeacon(url, blob))) {
        fetch(url, { method: "POST", body, headers: { "Content-Type": "text/plain" }, keepalive: true, credentials: "omit", mode: "cors" }).catch(() => {});
      }
    }
  }

  customElements.define(TAG, ArticleAudioPlayer);
})();
