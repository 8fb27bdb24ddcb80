// The access log cuts the query string off an article URL looked up by #9,
// however the request spelled the route (the router matches any case).
import { expect } from "chai";
import { loggablePath } from "../../gateway/request-context.js";

describe("loggablePath", () => {
  const secret = "https%3A%2F%2Fnews.example%2Fa%3Ftoken%3Dsecret";
  for (const prefix of ["/api/articles_external_url/", "/API/ARTICLES_EXTERNAL_URL/", "/Api/Articles_External_Url/"]) {
    it(`cuts the looked-up URL's query string under ${prefix}`, () => {
      expect(loggablePath(`${prefix}${secret}`)).to.equal(`${prefix}https%3A%2F%2Fnews.example%2Fa?…`);
      expect(loggablePath(`${prefix}https://news.example/a?token=secret`)).to.equal(`${prefix}https://news.example/a?…`);
    });
  }
  it("leaves other paths alone", () => {
    expect(loggablePath("/API/articles/abc")).to.equal("/API/articles/abc");
  });
});
