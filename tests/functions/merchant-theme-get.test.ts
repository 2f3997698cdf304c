import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { RunningServer } from "../../scripts/local/server";
import { rpc } from "../../shared/kernel/db/rpc";
import { sha256Hex } from "../../shared/lib/crypto";
import { DEFAULT_ASSETS_PATH } from "../../shared/themes/default-assets";
import { defaultTheme } from "../../shared/themes/theme";
import { merchantFactory, testDb } from "../harness/factories";
import { call, errorOf } from "../harness/http";
import { ownThemeAssets } from "../harness/service";
import { startVariantServer } from "../harness/variant-server";

const NAME = "merchant-theme-get";

const CAPTURE_TOKENS = [
  "brand_name",
  "mode",
  "logo_wide_url",
  "logo_square_url",
  "logo_icon_url",
  "color_primary",
  "color_primary_fg",
  "color_background",
  "color_foreground",
  "color_muted",
  "color_border",
  "color_success",
  "color_danger",
  "radius_sm_px",
  "radius_md_px",
  "radius_lg_px",
  "font_heading_family",
  "font_body_family",
  "font_heading_url",
  "font_body_url",
  "font_heading_weight",
  "font_body_weight",
];
const MANDATE_TOKENS = CAPTURE_TOKENS.filter((t) => !["logo_icon_url", "color_success", "color_danger"].includes(t));

type Surface = "capture" | "mandate";

/** A complete custom theme for a surface, distinct from the default in every kind of token. */
function customTheme(surface: Surface, brand = "Acme Shoes") {
  const theme: Record<string, string | number> = {
    brand_name: brand,
    mode: "dark",
    logo_wide_url: "https://cdn.acme.test/wide.svg",
    logo_square_url: "https://cdn.acme.test/square.svg",
    logo_icon_url: "https://cdn.acme.test/icon.svg",
    color_primary: "340 82% 52%",
    color_primary_fg: "0 0% 0%",
    color_background: "222.2 84% 4.9%",
    color_foreground: "210 40% 98%",
    color_muted: "215 20.2% 65.1%",
    color_border: "217.2 32.6% 17.5%",
    color_success: "142 71% 45%",
    color_danger: "0 63% 31%",
    radius_sm_px: 0,
    radius_md_px: 4,
    radius_lg_px: 64,
    font_heading_family: '"Playfair Display", serif',
    font_body_family: "Inter, sans-serif",
    font_heading_url: "https://fonts.acme.test/playfair.css",
    font_body_url: "https://fonts.acme.test/inter.css",
    font_heading_weight: 900,
    font_body_weight: 100,
  };
  const tokens = surface === "capture" ? CAPTURE_TOKENS : MANDATE_TOKENS;
  return Object.fromEntries(tokens.map((t) => [t, theme[t]]));
}

function setDraft(merchantId: string, surface: Surface, theme = customTheme(surface)) {
  return rpc(testDb(), "theme_set", { merchant_id: merchantId, surface, theme });
}

async function publish(merchantId: string, surface: Surface, theme = customTheme(surface)) {
  await setDraft(merchantId, surface, theme);
  return rpc(testDb(), "theme_publish", { merchant_id: merchantId, surface });
}

function getTheme(key: string | null, query: Record<string, string>, headers: Record<string, string> = {}) {
  return call(NAME, { key, query, headers });
}

describe("merchant-theme-get", () => {
  describe("happy", () => {
    it("serves the complete default capture theme with customized false to a merchant with no theme", async () => {
      const m = await merchantFactory();
      const res = await getTheme(m.keys.pk_test, { merchant_id: m.merchant_id });
      expect(res.status).toBe(200);
      expect(Object.keys(res.body).sort()).toEqual(["customized", "merchant_id", "surface", "theme", "tokens", "version"]);
      expect(res.body).toMatchObject({ version: "1.0.0-beta", merchant_id: m.merchant_id, surface: "capture", customized: false });
      expect(res.body.tokens).toEqual(CAPTURE_TOKENS);
      expect(Object.keys(res.body.theme)).toEqual(CAPTURE_TOKENS);
      expect(res.body.theme).toEqual(defaultTheme("capture", ownThemeAssets()));
      expect(res.body.theme).toMatchObject({
        color_primary: "212 78% 15%",
        radius_sm_px: 8,
        radius_md_px: 12,
        radius_lg_px: 20,
        font_heading_weight: 600,
        font_body_weight: 400,
        mode: "light",
      });
      expect(res.text).not.toContain("null");
      expect(res.headers.get("cache-control")).toBe("public, max-age=60");
    });

    it("serves exactly the 19 mandate tokens for surface=mandate", async () => {
      const m = await merchantFactory();
      const res = await getTheme(m.keys.pk_test, { merchant_id: m.merchant_id, surface: "mandate" });
      expect(res.status).toBe(200);
      expect(res.body.surface).toBe("mandate");
      expect(res.body.tokens).toEqual(MANDATE_TOKENS);
      expect(res.body.tokens).toHaveLength(19);
      expect(Object.keys(res.body.theme)).toEqual(MANDATE_TOKENS);
      expect(res.body.theme).toEqual(defaultTheme("mandate", ownThemeAssets()));
    });

    it("serves every URL token of the default theme itself: each resolves with 200, without a key, from the service's own host", async () => {
      const m = await merchantFactory();
      const urls = new Set<string>();
      for (const surface of ["capture", "mandate"]) {
        const res = await getTheme(m.keys.pk_test, { merchant_id: m.merchant_id, surface });
        expect(res.body.customized).toBe(false);
        for (const [token, value] of Object.entries(res.body.theme)) if (token.endsWith("_url")) urls.add(value as string);
      }
      expect(urls.size).toBe(4); // three logos and one stylesheet for both font tokens
      for (const url of urls) {
        expect(url.startsWith(`${ownThemeAssets()}/`), url).toBe(true);
        const asset = await fetch(url);
        const body = await asset.text();
        expect(asset.status, url).toBe(200);
        expect(asset.headers.get("content-type"), url).toBe(url.endsWith(".svg") ? "image/svg+xml" : "text/css; charset=utf-8");
        expect(asset.headers.get("x-content-type-options")).toBe("nosniff");
        expect(asset.headers.get("cache-control")).toBe("public, max-age=86400");
        expect(body.length, url).toBeGreaterThan(0);
        if (url.endsWith(".svg")) expect(body).toMatch(/^<svg /);
      }
      const unknown = await fetch(`${ownThemeAssets()}/logo-huge.svg`);
      expect(unknown.status).toBe(404);
      expect(((await unknown.json()) as { code: string }).code).toBe("ROUTE_NOT_FOUND");
    });

    it("serves a published theme with customized true, on both surfaces independently", async () => {
      const m = await merchantFactory();
      await publish(m.merchant_id, "capture");
      const capture = await getTheme(m.keys.pk_test, { merchant_id: m.merchant_id, surface: "capture" });
      expect(capture.body).toMatchObject({ customized: true, surface: "capture", tokens: CAPTURE_TOKENS });
      expect(capture.body.theme).toEqual(customTheme("capture"));
      expect(Object.keys(capture.body.theme)).toEqual(CAPTURE_TOKENS);

      const mandate = await getTheme(m.keys.pk_test, { merchant_id: m.merchant_id, surface: "mandate" });
      expect(mandate.body).toMatchObject({ customized: false, theme: defaultTheme("mandate", ownThemeAssets()) });

      await publish(m.merchant_id, "mandate", customTheme("mandate", "Acme Mandates"));
      const published = await getTheme(m.keys.pk_test, { merchant_id: m.merchant_id, surface: "mandate" });
      expect(published.body).toMatchObject({ customized: true, tokens: MANDATE_TOKENS, theme: customTheme("mandate", "Acme Mandates") });
    });

    it("does not serve a theme that is set but not published", async () => {
      const m = await merchantFactory();
      await setDraft(m.merchant_id, "capture");
      const res = await getTheme(m.keys.pk_test, { merchant_id: m.merchant_id });
      expect(res.body).toMatchObject({ customized: false, theme: defaultTheme("capture", ownThemeAssets()) });
    });

    it("keeps serving the published theme while a newer draft waits, and switches on publish", async () => {
      const m = await merchantFactory();
      await publish(m.merchant_id, "capture", customTheme("capture", "First"));
      await setDraft(m.merchant_id, "capture", customTheme("capture", "Second"));
      expect((await getTheme(m.keys.pk_test, { merchant_id: m.merchant_id })).body.theme.brand_name).toBe("First");
      await rpc(testDb(), "theme_publish", { merchant_id: m.merchant_id, surface: "capture" });
      expect((await getTheme(m.keys.pk_test, { merchant_id: m.merchant_id })).body.theme.brand_name).toBe("Second");
    });

    it("serves the full default, not a merge, when the published row has a NULL token", async () => {
      const m = await merchantFactory();
      await publish(m.merchant_id, "capture");
      await testDb()`
        update private.themes set color_muted = null
        where merchant_id = ${m.merchant_id} and surface = 'capture' and stage = 'published'`;
      const res = await getTheme(m.keys.pk_test, { merchant_id: m.merchant_id });
      expect(res.status).toBe(200);
      expect(res.body.customized).toBe(false);
      expect(res.body.theme).toEqual(defaultTheme("capture", ownThemeAssets()));
      expect(res.body.theme.brand_name).not.toBe("Acme Shoes");
      expect(res.text).not.toContain("null");
    });

    it("answers POST with a JSON body exactly as GET with a query", async () => {
      const m = await merchantFactory();
      await publish(m.merchant_id, "mandate");
      const viaGet = await getTheme(m.keys.pk_test, { merchant_id: m.merchant_id, surface: "mandate" });
      const viaPost = await call(NAME, { key: m.keys.pk_test, body: { merchant_id: m.merchant_id, surface: "mandate" } });
      expect(viaPost.status).toBe(200);
      expect(viaPost.body).toEqual(viaGet.body);
      expect(viaPost.headers.get("cache-control")).toBe("public, max-age=60");
      const defaulted = await call(NAME, { key: m.keys.pk_test, body: { merchant_id: m.merchant_id } });
      expect(defaulted.body.surface).toBe("capture");
    });

    it("accepts secret and live keys of the merchant as well as the publishable test key", async () => {
      const m = await merchantFactory();
      await publish(m.merchant_id, "capture");
      for (const key of [m.keys.sk_test, m.keys.pk_live, m.keys.sk_live]) {
        const res = await getTheme(key, { merchant_id: m.merchant_id });
        expect(res.status).toBe(200);
        expect(res.body.customized).toBe(true);
      }
    });
  });

  describe("errors", () => {
    it.each([
      ["no merchant_id", {}],
      ["a blank merchant_id", { merchant_id: "   " }],
    ])("answers GET with %s with 400 MERCHANT_ID_REQUIRED", async (_, query) => {
      const m = await merchantFactory();
      expect(errorOf(await getTheme(m.keys.pk_test, query))).toEqual({ status: 400, code: "MERCHANT_ID_REQUIRED" });
    });

    it.each([[{}], [{ surface: "mandate" }], [{ merchant_id: "" }], [{ merchant_id: 42 }], [{ merchant_id: null }]])(
      "answers POST %j with 400 MERCHANT_ID_REQUIRED",
      async (body) => {
        const m = await merchantFactory();
        const res = await call(NAME, { key: m.keys.pk_test, body });
        expect(errorOf(res)).toEqual({ status: 400, code: "MERCHANT_ID_REQUIRED" });
        expect(res.body.error).toEqual(expect.any(String));
      },
    );

    it.each(["foo", "CAPTURE", "", "agent"])("answers surface=%j with 400 INVALID_SURFACE", async (surface) => {
      const m = await merchantFactory();
      expect(errorOf(await getTheme(m.keys.pk_test, { merchant_id: m.merchant_id, surface }))).toEqual({
        status: 400,
        code: "INVALID_SURFACE",
      });
      const res = await call(NAME, { key: m.keys.pk_test, body: { merchant_id: m.merchant_id, surface } });
      expect(errorOf(res)).toEqual({ status: 400, code: "INVALID_SURFACE" });
    });

    it("answers a non-string surface in a JSON body with 400 INVALID_SURFACE", async () => {
      const m = await merchantFactory();
      const res = await call(NAME, { key: m.keys.pk_test, body: { merchant_id: m.merchant_id, surface: 1 } });
      expect(errorOf(res)).toEqual({ status: 400, code: "INVALID_SURFACE" });
    });

    it("refuses a body that is not a JSON object", async () => {
      const m = await merchantFactory();
      expect(
        errorOf(await call(NAME, { key: m.keys.pk_test, rawBody: "{not json", headers: { "content-type": "application/json" } })),
      ).toEqual({ status: 400, code: "INVALID_JSON" });
      expect(errorOf(await call(NAME, { key: m.keys.pk_test, body: [m.merchant_id] }))).toEqual({ status: 400, code: "INVALID_INPUT" });
    });

    it.each(["PUT", "PATCH", "DELETE"])("answers %s with 405 METHOD_NOT_ALLOWED", async (method) => {
      const m = await merchantFactory();
      const res = await call(NAME, {
        method,
        key: m.keys.pk_test,
        query: { merchant_id: m.merchant_id },
        body: method === "DELETE" ? undefined : {},
      });
      expect(errorOf(res)).toEqual({ status: 405, code: "METHOD_NOT_ALLOWED" });
      expect(res.headers.get("allow")).toContain("GET");
      expect(res.headers.get("allow")).toContain("POST");
    });

    it("answers a request without a key with 401 API_KEY_REQUIRED, before looking at the input", async () => {
      const m = await merchantFactory();
      expect(errorOf(await getTheme(null, { merchant_id: m.merchant_id }))).toEqual({ status: 401, code: "API_KEY_REQUIRED" });
      expect(errorOf(await getTheme(null, {}))).toEqual({ status: 401, code: "API_KEY_REQUIRED" });
      expect(errorOf(await call(NAME, { body: { merchant_id: m.merchant_id } }))).toEqual({ status: 401, code: "API_KEY_REQUIRED" });
    });

    it.each([
      ["a malformed key", "not-a-key"],
      ["a well-formed unknown key", `pk_test_${"A".repeat(40)}`],
    ])("answers %s with 401 INVALID_API_KEY", async (_, key) => {
      const m = await merchantFactory();
      expect(errorOf(await getTheme(key, { merchant_id: m.merchant_id }))).toEqual({ status: 401, code: "INVALID_API_KEY" });
    });

    it("answers a revoked key with 401 INVALID_API_KEY", async () => {
      const m = await merchantFactory();
      expect((await getTheme(m.keys.pk_test, { merchant_id: m.merchant_id })).status).toBe(200);
      await rpc(testDb(), "api_key_revoke", { key_hash: await sha256Hex(m.keys.pk_test) });
      const res = await getTheme(m.keys.pk_test, { merchant_id: m.merchant_id });
      expect(errorOf(res)).toEqual({ status: 401, code: "INVALID_API_KEY" });
      expect(res.headers.get("cache-control")).toBeNull();
      expect((await getTheme(m.keys.pk_live, { merchant_id: m.merchant_id })).status).toBe(200);
    });
  });

  describe("security", () => {
    it("never serves another merchant's theme: a foreign merchant_id gets exactly what an unknown one gets", async () => {
      const owner = await merchantFactory();
      const other = await merchantFactory();
      await publish(owner.merchant_id, "capture", customTheme("capture", "Owner Brand"));
      await publish(owner.merchant_id, "mandate", customTheme("mandate", "Owner Brand"));

      for (const surface of ["capture", "mandate"]) {
        const foreign = await getTheme(other.keys.pk_test, { merchant_id: owner.merchant_id, surface });
        const unknown = await getTheme(other.keys.pk_test, { merchant_id: "00000000-0000-4000-8000-000000000000", surface });
        expect(foreign.status).toBe(200);
        expect(foreign.body.customized).toBe(false);
        expect(foreign.text).not.toContain("Owner Brand");
        expect({ ...foreign.body, merchant_id: "x" }).toEqual({ ...unknown.body, merchant_id: "x" });
        expect(foreign.body.merchant_id).toBe(owner.merchant_id);
      }
      const own = await getTheme(owner.keys.pk_test, { merchant_id: owner.merchant_id });
      expect(own.body.theme.brand_name).toBe("Owner Brand");
    });

    it("answers a merchant_id that is not a UUID like an unknown merchant, not with an error", async () => {
      const m = await merchantFactory();
      const res = await getTheme(m.keys.pk_test, { merchant_id: "'; drop table private.themes; --" });
      expect(res.status).toBe(200);
      expect(res.body).toMatchObject({ customized: false, theme: defaultTheme("capture", ownThemeAssets()) });
    });

    it("matches the merchant_id case-insensitively", async () => {
      const m = await merchantFactory();
      await publish(m.merchant_id, "capture");
      const res = await getTheme(m.keys.pk_test, { merchant_id: m.merchant_id.toUpperCase() });
      expect(res.body.customized).toBe(true);
    });

    it("accepts the legacy key header with the same semantics", async () => {
      const m = await merchantFactory();
      await publish(m.merchant_id, "capture");
      const res = await getTheme(null, { merchant_id: m.merchant_id }, { "x-api-key": m.keys.pk_test });
      expect(res.status).toBe(200);
      expect(res.body.customized).toBe(true);
      expect(errorOf(await getTheme(null, { merchant_id: m.merchant_id }, { "x-api-key": "pk_test_bogus" }))).toEqual({
        status: 401,
        code: "INVALID_API_KEY",
      });
    });

    it("lets x-service-api-key win over the legacy header when both are present", async () => {
      const a = await merchantFactory();
      const b = await merchantFactory();
      await publish(a.merchant_id, "capture", customTheme("capture", "Brand A"));
      await publish(b.merchant_id, "capture", customTheme("capture", "Brand B"));

      const asA = await getTheme(a.keys.pk_test, { merchant_id: a.merchant_id }, { "x-api-key": b.keys.pk_test });
      expect(asA.body).toMatchObject({ customized: true, theme: { brand_name: "Brand A" } });
      const askB = await getTheme(a.keys.pk_test, { merchant_id: b.merchant_id }, { "x-api-key": b.keys.pk_test });
      expect(askB.body.customized).toBe(false);

      const badWins = await getTheme(`pk_test_${"Z".repeat(40)}`, { merchant_id: a.merchant_id }, { "x-api-key": a.keys.pk_test });
      expect(errorOf(badWins)).toEqual({ status: 401, code: "INVALID_API_KEY" });
    });

    it("varies shared caches on the key headers, so one key's answer is never served to another", async () => {
      const m = await merchantFactory();
      const res = await getTheme(m.keys.pk_test, { merchant_id: m.merchant_id });
      expect(res.headers.get("vary")).toContain("x-service-api-key");
      expect(res.headers.get("vary")).toContain("x-api-key");
    });
  });

  describe("where the default assets are, by configuration", () => {
    const servers: RunningServer[] = [];
    const named = { PUBLIC_BASE_URL: "https://auth.example.org/", THEME_ASSETS_BASE_URL: undefined };
    const cdn = { PUBLIC_BASE_URL: "https://auth.example.org", THEME_ASSETS_BASE_URL: "https://static.example.net/theme/" };

    beforeAll(async () => {
      // One after the other: two starting at once can be handed the same free port.
      for (const bindings of [named, cdn]) servers.push(await startVariantServer([NAME], bindings));
    }, 120_000);
    afterAll(async () => {
      await Promise.all(servers.map((server) => server.stop()));
    });

    async function defaultOn(server: RunningServer) {
      const m = await merchantFactory();
      const res = await fetch(`${server.url}/functions/v1/${NAME}?merchant_id=${m.merchant_id}`, {
        headers: { "x-service-api-key": m.keys.pk_test },
      });
      return ((await res.json()) as { theme: Record<string, unknown> }).theme;
    }

    it("PUBLIC_BASE_URL names the service's own host in the default theme, in place of the host the request reached", async () => {
      expect(await defaultOn(servers[0])).toEqual(defaultTheme("capture", `https://auth.example.org${DEFAULT_ASSETS_PATH}`));
    });

    it("THEME_ASSETS_BASE_URL moves the default assets to a deployment's own assets host", async () => {
      expect(await defaultOn(servers[1])).toEqual(defaultTheme("capture", "https://static.example.net/theme"));
    });
  });
});
