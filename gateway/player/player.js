/* article-audio-player: the platform's embeddable audio player (v1).
 * <script src="{base}/player/v1/player.js" async></script>
 * <article-audio-player key="pk_…" article-url="https://…"></article-audio-player>
 * No framework, no globals besides the element; styles live in its shadow root.
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
  // Audio on demand: while it is being made the lookup is repeated, often until the preview is
  // there (it takes a second or two), then once a second, for at most three minutes.
  const FOLLOW_PREVIEW_MS = 250;
  const FOLLOW_MS = 1000;
  const FOLLOW_FOR_MS = 180000;

  const STYLE = `
:host{display:block;font:var(--aap-font,14px/1.4 system-ui,-apple-system,"Segoe UI",Roboto,sans-serif);color:var(--aap-fg,#1d1d1f)}
:host([hidden]){display:none}
.box{display:flex;align-items:center;gap:.6em;padding:.6em .8em;background:var(--aap-bg,#f4f4f6);border-radius:var(--aap-radius,12px);border:1px solid var(--aap-border,rgba(0,0,0,.08))}
button{all:unset;box-sizing:border-box;display:inline-flex;align-items:center;justify-content:center;min-width:2.4em;height:2.4em;padding:0 .5em;border-radius:999px;cursor:pointer;color:inherit;font:inherit;font-weight:600;transition:background-color .15s,filter .15s}
button:hover{background:rgba(127,127,127,.15)}
button:focus-visible,input:focus-visible{outline:3px solid var(--aap-focus,#1a73e8);outline-offset:2px}
.play{background:var(--aap-accent,#1a73e8);color:var(--aap-on-accent,#fff)}
.play:hover{background:var(--aap-accent,#1a73e8);filter:brightness(1.1)}
.play svg{width:1.1em;height:1.1em;fill:currentColor}
.main{flex:1;min-width:0;display:flex;flex-direction:column;gap:.2em}
.title{white-space:nowrap;overflow:hidden;text-overflow:ellipsis;font-weight:600}
.row{display:flex;align-items:center;gap:.6em}
input[type=range]{flex:1;min-width:4em;accent-color:var(--aap-accent,#1a73e8);margin:0}
.time{font-variant-numeric:tabular-nums;font-size:.85em;opacity:.8;white-space:nowrap}
.speed{font-size:.85em;min-width:3.4em}
@media (prefers-color-scheme:dark){:host{color:var(--aap-fg,#f2f2f7)}.box{background:var(--aap-bg,#1f1f24);border-color:var(--aap-border,rgba(255,255,255,.12))}.play{background:var(--aap-accent,#8ab4f8);color:var(--aap-on-accent,#101014)}input[type=range]{accent-color:var(--aap-accent,#8ab4f8)}button:focus-visible,input:focus-visible{outline-color:var(--aap-focus,#8ab4f8)}}
@media (prefers-reduced-motion:reduce){*{transition:none!important;animation:none!important}}
`;
  const PLAY = '<svg viewBox="0 0 24 24" aria-hidden="true"><path d="M8 5v14l11-7z"/></svg>';
  const PAUSE = '<svg viewBox="0 0 24 24" aria-hidden="true"><path d="M6 5h4v14H6zM14 5h4v14h-4z"/></svg>';

  const clock = (s) => {
    if (!isFinite(s) || s < 0) s = 0;
    s = Math.floor(s);
    const h = Math.floor(s / 3600), m = Math.floor((s % 3600) / 60), sec = String(s % 60).padStart(2, "0");
    return h ? `${h}:${String(m).padStart(2, "0")}:${sec}` : `${m}:${sec}`;
  };
  const spoken = (s) => {
    s = Math.floor(isFinite(s) ? s : 0);
    const m = Math.floor(s / 60), sec = s % 60;
    return m ? `${m} minute${m === 1 ? "" : "s"} ${sec} second${sec === 1 ? "" : "s"}` : `${sec} second${sec === 1 ? "" : "s"}`;
  };

  class ArticleAudioPlayer extends HTMLElement {
    static get observedAttributes() { return ["key", "article-id", "external-id", "article-url", "base"]; }

    constructor() {
      super();
      this._root = this.attachShadow({ mode: "open" });
      this._events = [];
      this._marks = new Set();
      this._seconds = 0;
      this._loadSeq = 0;
    }

    connectedCallback() {
      this._onHide = () => { if (document.visibilityState === "hidden") this._flush(); };
      this._onLeave = () => this._flush();
      document.addEventListener("visibilitychange", this._onHide);
      window.addEventListener("pagehide", this._onLeave);
      this._load();
    }

    disconnectedCallback() {
      document.removeEventListener("visibilitychange", this._onHide);
      window.removeEventListener("pagehide", this._onLeave);
      clearInterval(this._timer);
      clearTimeout(this._follow);
      this._flush();
    }

    attributeChangedCallback(_name, before, after) {
      if (before !== after && this.isConnected) this._load();
    }

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
      const next = a.audio || a.audio_preview;
      if (!next || next === this._src) return;
      const audio = this._audio, at = audio.currentTime;
      const resume = this._wantPlay || !audio.paused || this._outran;
      this._wantPlay = this._outran = false;
      this._src = audio.src = next;
      if (at > 0) audio.addEventListener("loadedmetadata", () => { audio.currentTime = at; }, { once: true });
      if (resume) audio.play().catch(() => {});
    }

    _nothing(why) {
      this.hidden = true;
      this._root.innerHTML = "";
      if (!this._warned) {
        this._warned = true;
        console.warn(`<${TAG}>: showing nothing: ${why}`);
      }
    }

    _render(key, a) {
      this.hidden = false;
      this._key = key;
      this._article = a;
      this._root.innerHTML = `<style>${STYLE}</style>
<div class="box" part="container" role="region">
  <button class="play" part="play-button" type="button" aria-label="Play">${PLAY}</button>
  <div class="main">
    <div class="title" part="title"></div>
    <div class="row">
      <input class="seek" part="progress" type="range" min="0" max="0" step="1" value="0">
      <span class="time" part="time" aria-hidden="true">0:00 / 0:00</span>
    </div>
  </div>
  <button class="back" part="skip-button" type="button" aria-label="Back 15 seconds">−15</button>
  <button class="speed" part="speed-button" type="button">1×</button>
  <audio preload="metadata"></audio>
</div>`;
      const $ = (s) => this._root.querySelector(s);
      const box = $(".box"), play = $(".play"), seek = $(".seek"), time = $(".time"), speed = $(".speed"), back = $(".back");
      const audio = (this._audio = $("audio"));
      box.setAttribute("aria-label", `Listen to the article: ${a.title}`);
      $(".title").textContent = a.title;
      this._src = a.audio || a.audio_preview || "";
      if (this._src) audio.src = this._src;
      const duration = () => (isFinite(audio.duration) && audio.duration > 0 ? audio.duration : a.audio_duration || 0);
      const paint = () => {
        const d = duration();
        seek.max = String(Math.round(d));
        seek.value = String(Math.floor(audio.currentTime));
        seek.setAttribute("aria-label", "Seek");
        seek.setAttribute("aria-valuetext", `${spoken(audio.currentTime)} of ${spoken(d)}`);
        time.textContent = `${clock(audio.currentTime)} / ${clock(d)}`;
      };
      const setSpeed = (r) => {
        audio.playbackRate = r;
        speed.textContent = `${r}×`;
        speed.setAttribute("aria-label", `Playback speed ${r} times; change`);
      };
      setSpeed(1);
      paint();

      play.addEventListener("click", () => {
        // Nothing to play yet (audio on demand): it starts as soon as the preview is there.
        if (!this._src) return void (this._wantPlay = !this._wantPlay);
        audio.paused ? audio.play().catch(() => {}) : audio.pause();
      });
      back.addEventListener("click", () => { audio.currentTime = Math.max(0, audio.currentTime - 15); paint(); });
      speed.addEventListener("click", () => setSpeed(SPEEDS[(SPEEDS.indexOf(audio.playbackRate) + 1) % SPEEDS.length]));
      seek.addEventListener("input", () => { audio.currentTime = Number(seek.value); paint(); });
      audio.addEventListener("loadedmetadata", paint);
      audio.addEventListener("play", () => {
        play.innerHTML = PAUSE;
        play.setAttribute("aria-label", "Pause");
        if (!this._played) { this._played = true; this._event("play"); }
      });
      audio.addEventListener("pause", () => { play.innerHTML = PLAY; play.setAttribute("aria-label", "Play"); this._flush(); });
      let last = 0;
      audio.addEventListener("timeupdate", () => {
        const t = audio.currentTime, step = t - last;
        last = t;
        // Only time actually played counts, not jumps made by seeking.
        if (!audio.paused && step > 0 && step < 2) this._seconds += step;
        const d = duration();
        // Marks count against the full file only, not the preview that plays first.
        if (d > 0 && !this._article.pending) for (const m of MARKS) if (!this._marks.has(m) && t / d >= m / 100) { this._marks.add(m); this._event("progress", { percent: m }); }
        paint();
      });
      audio.addEventListener("seeked", () => { last = audio.currentTime; });
      audio.addEventListener("ended", () => {
        // The preview ran out before the rest was made: it continues when the full file comes.
        if (this._article.pending) return void (this._outran = true);
        if (!this._marks.has(100)) { this._marks.add(100); this._event("complete"); }
        this._flush();
      });
      clearInterval(this._timer);
      this._timer = setInterval(() => this._flush(), FLUSH_MS);
      this._event("impression");
    }

    _event(type, extra) {
      if (!this._article) return;
      this._events.push(Object.assign({ type, articleId: this._article.id }, extra));
      if (type !== "impression" && type !== "progress") this._flush();
    }

    _flush() {
      if (!this._key || !this._article) return;
      const seconds = Math.round(this._seconds * 10) / 10;
      if (seconds > 0) {
        // Listening time rides on the last queued event, or on a "listen" event of its own.
        if (!this._events.length) this._events.push({ type: "listen", articleId: this._article.id });
        this._events[this._events.length - 1].seconds = Math.min(600, seconds);
        this._seconds = 0;
      }
      if (!this._events.length) return;
      const body = JSON.stringify({ key: this._key, events: this._events.splice(0, 50) });
      const url = `${this._base}/player/v1/events`;
      const blob = new Blob([body], { type: "text/plain" });
      if (!(navigator.sendBeacon && navigator.sendBeacon(url, blob))) {
        fetch(url, { method: "POST", body, headers: { "Content-Type": "text/plain" }, keepalive: true, credentials: "omit", mode: "cors" }).catch(() => {});
      }
    }
  }

  customElements.define(TAG, ArticleAudioPlayer);
})();
