/**
 * Themes through the account's management API (docs/management.md, "Themes"; D-525, D-526) over
 * HTTP: logos and fonts uploaded (their bytes judged, an SVG with anything but drawing refused),
 * served from the service's own origin with immutable cache headers; a draft per surface that may be
 * incomplete, validated, previewed and published only when complete; merchant-theme-get then
 * serves the uploads as the service's URLs. Wrong key kind, missing scope, another merchant's
 * asset, an idempotent retry and the audit log.
 */
import { describe, expect, it } from "vitest";
import { merchantFactory, testDb } from "../harness/factories";
import { call, errorOf } from "../harness/http";
import { v1 } from "../harness/resource-api";
import { serviceUnderTest } from "../harness/service";
import { completeCaptureTheme, TEST_FONT } from "../harness/theme-fixtures";

const LOGO_SVG =
  '<svg xmlns="http://www.w3.org/2000/svg" width="64" height="64" viewBox="0 0 64 64"><title>Acme</title>' +
  '<defs><linearGradient id="g"><stop offset="0" stop-color="#7c3aed"/><stop offset="1" stop-color="#db2777"/></linearGradient></defs>' +
  '<rect width="64" height="64" rx="14" fill="url(#g)"/><circle cx="32" cy="32" r="12" fill="#fff"/></svg>';
const b64 = (data: string | Uint8Array) => Buffer.from(data).toString("base64");

/** The complete capture theme of the tests, its logos and fonts the given uploads. */
const completeTheme = (logo: string, font: string) =>
  completeCaptureTheme({ logo, font, brand: "Acme Pay", family: "Acme Mono", primary: "262 83% 58%" });

async function uploads(key: string) {
  const logo = await v1("/theme_assets", { key, body: { kind: "logo", content_type: "image/svg+xml", data: b64(LOGO_SVG) } });
  expect(logo.status, logo.text).toBe(201);
  const font = await v1("/theme_assets", {
    key,
    body: { kind: "font", content_type: "font/woff2", data: b64(TEST_FONT), family: "Acme Mono" },
  });
  expect(font.status, font.text).toBe(201);
  return { logo: logo.body, font: font.body };
}

async function auditActions(merchantId: string): Promise<string[]> {
  const rows = await testDb()`select action from private.management_audit_events
    where merchant_id = ${merchantId} and action like 'theme%' order by occurred_at, id`;
  return rows.map((row) => row.action as string);
}

describe("/v1/theme_assets", () => {
  it("stores a logo and a font and serves them from the service's origin, immutable, never as a document that runs", async () => {
    const merchant = await merchantFactory();
    const { logo, font } = await uploads(merchant.keys.sk_test);
    expect(logo).toMatchObject({ object: "theme_asset", kind: "logo", content_type: "image/svg+xml", family: null, stylesheet_url: null });
    expect(logo.id).toMatch(/^ta_[0-9a-f]{32}$/);
    expect(logo.bytes).toBe(Buffer.byteLength(LOGO_SVG));
    expect(font).toMatchObject({ kind: "font", content_type: "font/woff2", family: "Acme Mono", bytes: TEST_FONT.length });
    const origin = serviceUnderTest().baseUrl;
    expect(logo.url.startsWith(`${origin}/functions/v1/merchant-theme-get/assets/u/`)).toBe(true);

    const image = await fetch(logo.url);
    expect(image.status).toBe(200);
    expect(image.headers.get("content-type")).toBe("image/svg+xml");
    expect(image.headers.get("cache-control")).toBe("public, max-age=31536000, immutable");
    expect(image.headers.get("x-content-type-options")).toBe("nosniff");
    expect(image.headers.get("content-security-policy")).toContain("default-src 'none'");
    expect(await image.text()).toBe(LOGO_SVG);

    const file = await fetch(font.url);
    expect(file.headers.get("content-type")).toBe("font/woff2");
    expect(Buffer.from(await file.arrayBuffer()).equals(TEST_FONT)).toBe(true);
    const sheet = await fetch(font.stylesheet_url);
    expect(sheet.headers.get("content-type")).toBe("text/css; charset=utf-8");
    expect(sheet.headers.get("cache-control")).toContain("immutable");
    expect(await sheet.text()).toContain(`font-family: "Acme Mono"; src: url("${font.id.slice(3)}") format("woff2")`);
    // a logo has no stylesheet; an unknown id is not found
    expect((await fetch(`${logo.url}.css`)).status).toBe(404);
    expect((await fetch(logo.url.replace(/[0-9a-f]{32}$/, "0".repeat(32)))).status).toBe(404);

    const listed = await v1("/theme_assets", { key: merchant.keys.sk_test });
    expect(listed.body.data.map((a: { id: string }) => a.id)).toEqual([font.id, logo.id]);
    expect(listed.text).not.toContain(b64(LOGO_SVG));
  });

  it.each([
    ["a script", '<svg xmlns="http://www.w3.org/2000/svg"><script>alert(1)</script></svg>', /<script>/],
    ["an event attribute", '<svg xmlns="http://www.w3.org/2000/svg" onload="alert(1)"><rect width="1" height="1"/></svg>', /onload/],
    ["an outside image", '<svg xmlns="http://www.w3.org/2000/svg"><image href="https://evil.example/x.png"/></svg>', /<image>/],
    ["an outside use", '<svg xmlns="http://www.w3.org/2000/svg"><use href="https://evil.example/x.svg#a"/></svg>', /href/],
    ["a foreignObject", '<svg xmlns="http://www.w3.org/2000/svg"><foreignObject><p>x</p></foreignObject></svg>', /foreignObject/],
    ["an entity", '<!DOCTYPE svg [<!ENTITY x "y">]><svg xmlns="http://www.w3.org/2000/svg"/>', /DOCTYPE/],
    ["a style sheet", '<svg xmlns="http://www.w3.org/2000/svg"><style>@import url(https://evil.example/a.css)</style></svg>', /<style>/],
    ["an outside url()", '<svg xmlns="http://www.w3.org/2000/svg"><rect fill="url(https://evil.example/p)"/></svg>', /url\(\)/],
  ])("refuses an SVG holding %s", async (_, svg, why) => {
    const merchant = await merchantFactory();
    const refused = await v1("/theme_assets", {
      key: merchant.keys.sk_test,
      body: { kind: "logo", content_type: "image/svg+xml", data: b64(svg) },
    });
    expect(errorOf(refused)).toEqual({ status: 422, code: "asset_invalid" });
    expect(refused.body.problem).toMatch(why);
    expect(await testDb()`select 1 from private.theme_assets where merchant_id = ${merchant.merchant_id}`).toHaveLength(0);
  });

  it("judges the bytes, not the declared type, and refuses what is too large or not a logo or font", async () => {
    const key = (await merchantFactory()).keys.sk_test;
    const upload = (body: Record<string, unknown>) => v1("/theme_assets", { key, body });
    const png = Buffer.from("89504e470d0a1a0a0000000d49484452", "hex");
    const refusals = [
      [{ kind: "logo", content_type: "image/svg+xml", data: b64(png) }, /its bytes are image\/png/],
      [{ kind: "logo", content_type: "text/html", data: b64("<html><script>x</script></html>") }, /must be one of/],
      [{ kind: "logo", content_type: "font/woff2", data: b64(TEST_FONT) }, /must be one of/],
      [{ kind: "font", content_type: "font/woff2", data: b64(TEST_FONT) }, /family/],
      [{ kind: "logo", content_type: "image/png", data: b64(png), family: "X" }, /fonts only/],
      [{ kind: "logo", content_type: "image/png", data: b64(Buffer.concat([png, Buffer.alloc(128 * 1024)])) }, /at most 131072 bytes/],
    ] as const;
    for (const [body, why] of refusals) {
      const refused = await upload(body);
      expect(errorOf(refused), JSON.stringify(body).slice(0, 80)).toEqual({ status: 422, code: "asset_invalid" });
      expect(refused.body.problem).toMatch(why);
    }
    expect(errorOf(await upload({ kind: "banner", content_type: "image/png", data: b64(png) }))).toEqual({
      status: 400,
      code: "invalid_input",
    });
    expect(errorOf(await upload({ kind: "logo", content_type: "image/png", data: "not base64!" }))).toEqual({
      status: 400,
      code: "invalid_input",
    });
    expect((await upload({ kind: "logo", content_type: "image/png", data: b64(png) })).status).toBe(201);
  });

  it("takes management.write to upload, management.read to list, and a secret key", async () => {
    const merchant = await merchantFactory();
    const reader = await v1("/api_keys", { key: merchant.keys.sk_test, body: { scopes: ["management.read"] } });
    const body = { kind: "logo", content_type: "image/svg+xml", data: b64(LOGO_SVG) };
    expect(errorOf(await v1("/theme_assets", { key: reader.body.secret, body }))).toEqual({ status: 403, code: "insufficient_scope" });
    expect((await v1("/theme_assets", { key: reader.body.secret })).status).toBe(200);
    expect(errorOf(await v1("/theme_assets", { key: merchant.keys.pk_test, body }))).toEqual({ status: 401, code: "auth_required" });
  });
});

describe("/v1/themes/{surface}", () => {
  it("drafts an incomplete theme, previews the default until it is complete, refuses to publish it, then publishes and serves the uploads", async () => {
    const merchant = await merchantFactory();
    const key = merchant.keys.sk_test;
    const { logo, font } = await uploads(key);
    expect((await v1("/themes/capture", { key })).body).toEqual({ object: "theme", surface: "capture", draft: null, published: null });
    expect(errorOf(await v1("/themes/capture/preview", { key }))).toEqual({ status: 404, code: "not_found" });
    expect(errorOf(await v1("/themes/capture/publish", { key, body: {} }))).toEqual({ status: 404, code: "not_found" });

    const partial = await v1("/themes/capture/draft", { key, body: { theme: { brand_name: "Acme Pay", logo_square_url: logo.id } } });
    expect(partial.status, partial.text).toBe(200);
    expect(partial.body.draft).toMatchObject({ version: 1, valid: false, theme: { brand_name: "Acme Pay", logo_square_url: logo.id } });
    expect(partial.body.draft.problems).toContain("color_primary: missing (every capture token is required)");
    const preview = await v1("/themes/capture/preview", { key });
    expect(preview.body).toMatchObject({ object: "theme_preview", version: 1, valid: false, customized: false });
    expect(preview.body.theme.brand_name).toBe("Human Authorisation");
    const refused = await v1("/themes/capture/publish", { key, body: {} });
    expect(errorOf(refused)).toEqual({ status: 422, code: "theme_invalid" });
    expect(refused.body.problems).toContain("color_primary: missing (every capture token is required)");

    const complete = await v1("/themes/capture/draft", { key, body: { theme: completeTheme(logo.id, font.id) } });
    expect(complete.body.draft).toMatchObject({ version: 2, valid: true, problems: [] });
    const ready = await v1("/themes/capture/preview", { key });
    expect(ready.body).toMatchObject({ version: 2, valid: true, customized: true });
    expect(ready.body.theme).toMatchObject({ brand_name: "Acme Pay", logo_square_url: logo.url, font_body_url: font.stylesheet_url });

    const published = await v1("/themes/capture/publish", { key, body: {} });
    expect(published.status, published.text).toBe(200);
    expect(published.body.published).toMatchObject({ valid: true, theme: { logo_square_url: logo.id } });
    const served = await call("merchant-theme-get", { key: merchant.keys.pk_test, body: { merchant_id: merchant.merchant_id } });
    expect(served.body).toMatchObject({
      customized: true,
      theme: { brand_name: "Acme Pay", logo_wide_url: logo.url, font_heading_url: font.stylesheet_url },
    });
    // the live key sees the same theme: themes are the merchant's (D-525)
    expect((await v1("/themes/capture", { key: merchant.keys.sk_live })).body.published.theme.logo_square_url).toBe(logo.id);

    expect(await auditActions(merchant.merchant_id)).toEqual([
      "theme_asset.uploaded",
      "theme_asset.uploaded",
      "theme.drafted",
      "theme.drafted",
      "theme.published",
    ]);
  });

  it("refuses invalid tokens, another surface's tokens, and an asset that is not this merchant's or not of the token's kind", async () => {
    const merchant = await merchantFactory();
    const other = await merchantFactory();
    const key = merchant.keys.sk_test;
    const mine = await uploads(key);
    const theirs = await uploads(other.keys.sk_test);
    const draft = (surface: string, theme: Record<string, unknown>) => v1(`/themes/${surface}/draft`, { key, body: { theme } });

    const bad = await draft("capture", { color_primary: "purple", radius_sm_px: 99 });
    expect(errorOf(bad)).toEqual({ status: 422, code: "theme_invalid" });
    expect(bad.body.problems).toEqual([
      'color_primary: must be an "H S% L%" triple such as "212 78% 15%" (got "purple")',
      "radius_sm_px: must be an integer from 0 to 64 (got 99)",
    ]);
    expect((await draft("mandate", { color_danger: "0 72% 51%" })).body.problems).toEqual([
      "color_danger: not a mandate token (capture only)",
    ]);
    const stolen = await draft("capture", { logo_wide_url: theirs.logo.id });
    expect(errorOf(stolen)).toEqual({ status: 422, code: "theme_invalid" });
    expect(stolen.body.problems).toEqual([`logo_wide_url: no logo ${theirs.logo.id} was uploaded by this merchant`]);
    expect((await draft("capture", { font_body_url: mine.logo.id })).body.problems).toEqual([
      `font_body_url: no font ${mine.logo.id} was uploaded by this merchant`,
    ]);
    expect(errorOf(await v1("/themes/banner", { key }))).toEqual({ status: 404, code: "not_found" });
    expect(errorOf(await v1("/themes/capture/draft", { key, body: { tokens: {} } }))).toEqual({ status: 400, code: "invalid_input" });
    // nothing was written
    expect((await v1("/themes/capture", { key })).body.draft).toBeNull();

    const checked = await v1("/themes/mandate/validate", { key, body: { theme: { brand_name: "Acme" } } });
    expect(checked.body).toMatchObject({ object: "theme_validation", surface: "mandate", valid: false });
    expect(checked.body.problems).toHaveLength(18);
  });

  it("takes management.write to draft and publish (read to look), replays a retried draft, and publishes only the draft it checked", async () => {
    const merchant = await merchantFactory();
    const key = merchant.keys.sk_test;
    const { logo, font } = await uploads(key);
    const reader = (await v1("/api_keys", { key, body: { scopes: ["management.read"] } })).body.secret;
    const payer = (await v1("/api_keys", { key, body: { scopes: ["api"] } })).body.secret;
    const body = { theme: completeTheme(logo.id, font.id) };
    expect(errorOf(await v1("/themes/capture/draft", { key: reader, body }))).toEqual({ status: 403, code: "insufficient_scope" });
    expect(errorOf(await v1("/themes/capture", { key: payer }))).toEqual({ status: 403, code: "insufficient_scope" });
    expect((await v1("/themes/capture/validate", { key: reader, body })).body.valid).toBe(true);

    const first = await v1("/themes/capture/draft", { key, body, idempotencyKey: "theme-draft-0001" });
    const again = await v1("/themes/capture/draft", { key, body, idempotencyKey: "theme-draft-0001" });
    expect(again.headers.get("idempotency-status")).toBe("replayed");
    expect(again.body).toEqual(first.body);
    expect((await v1("/themes/capture", { key })).body.draft.version).toBe(1);
    expect(errorOf(await v1("/themes/capture/publish", { key: reader, body: {} }))).toEqual({ status: 403, code: "insufficient_scope" });

    // another merchant sees none of it and cannot publish it
    const other = await merchantFactory();
    expect((await v1("/themes/capture", { key: other.keys.sk_test })).body.draft).toBeNull();
    expect(errorOf(await v1("/themes/capture/publish", { key: other.keys.sk_test, body: {} }))).toEqual({ status: 404, code: "not_found" });

    // a draft written between the check and the publication is not published unchecked: the RPC
    // publishes only the version the service checked
    const stale = testDb()`select public.management_theme_publish(${
      {
        merchant_id: merchant.merchant_id,
        environment: "test",
        now: new Date().toISOString(),
        actor: { kind: "api_key", id: "key_test", ip: null },
        surface: "capture",
        version: 0,
      } as never
    }::jsonb)`;
    await expect(stale).rejects.toMatchObject({ code: "HA454" });
    expect((await v1("/themes/capture/publish", { key, body: {} })).status).toBe(200);
  });
});
