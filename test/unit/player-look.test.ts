// The player's look (lib/player-look.ts): WCAG contrast as the designer and the API check it, and
// what a look resolves to for the player.
import { expect } from "chai";
import { checkContrast, completeLook, contrast, DEFAULT_LOOK, lookProblem, resolveLook } from "../../lib/player-look.js";

describe("player look", () => {
  it("measures contrast as WCAG 2 does", () => {
    expect(contrast("#000000", "#ffffff")).to.be.closeTo(21, 1e-9);
    expect(contrast("#ffffff", "#ffffff")).to.equal(1);
    expect(contrast("#777777", "#ffffff")).to.be.closeTo(4.48, 0.01);
  });

  it("accepts the built-in look and checks a chosen one in every scheme a listener may see", () => {
    expect(lookProblem(DEFAULT_LOOK)).to.equal(null);
    expect(checkContrast(DEFAULT_LOOK).map((c) => c.scheme)).to.deep.equal(["light", "dark"]);
    // Yellow on the light background: the play button would vanish.
    expect(lookProblem(completeLook({ accent: "#ffff00" }))).to.match(/^look\.accent: .*1\.\d\d:1 in the light scheme; at least 3:1/);
    // A dark blue passes on light, not on the dark scheme's background: fine once the scheme is fixed to light.
    expect(lookProblem(completeLook({ accent: "#0b57d0" }))).to.match(/dark scheme/);
    expect(lookProblem(completeLook({ accent: "#0b57d0", scheme: "light" }))).to.equal(null);
    // Mid grey: neither white nor black reaches 4.5:1 on it as the play icon.
    expect(lookProblem(completeLook({ accent: "#777777", scheme: "light" }))).to.match(/play icon .* 4\.48:1/);
  });

  it("resolves to custom properties only where the look differs from the built-in one", () => {
    expect(resolveLook(DEFAULT_LOOK)).to.deep.equal({ vars: {}, layout: "full", hide: [] });
    const r = resolveLook(completeLook({ accent: "#0b57d0", background: "#fffbe6", scheme: "light", layout: "compact", controls: { speed: false, time: false }, radius: 0 }));
    expect(r.vars).to.include({ "--aap-accent": "#0b57d0", "--aap-on-accent": "#ffffff", "--aap-bg": "#fffbe6", "--aap-fg": "#101014", "--aap-radius": "0px" });
    expect(r.layout).to.equal("compact");
    expect(r.hide).to.deep.equal(["time", "speed"]);
  });
});
