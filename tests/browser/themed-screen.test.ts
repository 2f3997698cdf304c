/**
 * The hosted screen shows the merchant's own logo and font (issue 30; D-526): the merchant uploads
 * an SVG logo and a WOFF2 font through /v1/theme_assets, drafts and publishes a theme naming them,
 * and the screen a /v1 session opens draws that logo and sets its text in that font, loaded from
 * the service's origin (the browser guard refuses any other host). axe-core in both schemes; the
 * intro is photographed in both.
 */
import { readFileSync } from "node:fs";
import { afterAll, beforeAll, describe, expect, inject, it } from "vitest";
import { merchantFactory } from "../harness/factories";
import { useOwnService } from "../harness/own-service";
import { v1 } from "../harness/resource-api";
import { type GuardedBrowser, openBrowser } from "./chromium";
import { accessibilityViolations, emulateScheme, PHONE, photograph, waitForView } from "./hosted-screen";

const service = useOwnService("themed_screen", ["resource-api", "hosted-capture", "merchant-theme-get"]);
let browser: GuardedBrowser;

const FONT = readFileSync(new URL("../fixtures/fonts/source-code-pro-500.woff2", import.meta.url));
const LOGO =
  '<svg xmlns="http://www.w3.org/2000/svg" width="96" height="96" viewBox="0 0 96 96"><title>Orchid Bank</title>' +
  '<defs><linearGradient id="g" x1="0" y1="0" x2="1" y2="1"><stop offset="0" stop-color="#7c3aed"/><stop offset="1" stop-color="#db2777"/></linearGradient></defs>' +
  '<rect width="96" height="96" rx="24" fill="url(#g)"/><path d="M24 66 L48 26 L72 66 Z" fill="#fff"/></svg>';
const b64 = (data: string | Uint8Array) => Buffer.from(data).toString("base64");

beforeAll(async () => {
  // a camera (the fake one): without one the screen offers the phone handoff instead of its intro
  browser = await openBrowser(service.own.server.url, { media: inject("media").reading, viewport: PHONE });
});

afterAll(async () => {
  await browser?.close();
});

describe("a published theme on the hosted screen", () => {
  it("shows the merchant's uploaded logo and sets its text in the uploaded font, from the service's own origin", async () => {
    const merchant = await merchantFactory("Orchid Bank");
    const key = merchant.keys.sk_test;
    const logo = await v1("/theme_assets", { key, body: { kind: "logo", content_type: "image/svg+xml", data: b64(LOGO) } });
    const font = await v1("/theme_assets", {
      key,
      body: { kind: "font", content_type: "font/woff2", data: b64(FONT), family: "Orchid Mono" },
    });
    expect([logo.status, font.status], `${logo.text} ${font.text}`).toEqual([201, 201]);
    const theme = {
      brand_name: "Orchid Bank",
      mode: "light",
      logo_wide_url: logo.body.id,
      logo_square_url: logo.body.id,
      logo_icon_url: logo.body.id,
      color_primary: "262 83% 45%",
      color_primary_fg: "0 0% 100%",
      color_background: "270 60% 98%",
      color_foreground: "262 50% 15%",
      color_muted: "262 10% 40%",
      color_border: "262 30% 88%",
      color_success: "152 55% 32%",
      color_danger: "0 72% 45%",
      radius_sm_px: 6,
      radius_md_px: 14,
      radius_lg_px: 24,
      font_heading_family: '"Orchid Mono", monospace',
      font_body_family: '"Orchid Mono", monospace',
      font_heading_url: font.body.id,
      font_body_url: font.body.id,
      font_heading_weight: 600,
      font_body_weight: 400,
    };
    expect((await v1("/themes/capture/draft", { key, body: { theme } })).status).toBe(200);
    const published = await v1("/themes/capture/publish", { key, body: {} });
    expect(published.status, published.text).toBe(200);

    const session = await v1("/sessions", { key, body: { mode: "claim", return_url: "https://orchid.example/back" } });
    expect(session.status, session.text).toBe(201);
    const page = await browser.newPage({ viewport: PHONE });
    await page.goto(session.body.url);
    await waitForView(page, "intro");
    await page.waitForFunction(
      () => (document.getElementById("logo") as HTMLImageElement).complete && !document.getElementById("logo")!.hidden,
    );
    await page.evaluate(() => document.fonts.ready);

    const shown = await page.evaluate(() => {
      const image = document.getElementById("logo") as HTMLImageElement;
      return {
        logo: { src: image.src, width: image.naturalWidth, visible: image.getBoundingClientRect().width > 0 },
        brand: document.getElementById("brand-name")!.textContent,
        font: getComputedStyle(document.getElementById("intro-title")!).fontFamily,
        loaded: [...document.fonts].filter((face) => face.family.replace(/"/g, "") === "Orchid Mono").map((face) => face.status),
        uses: document.fonts.check('16px "Orchid Mono"'),
      };
    });
    expect(shown.logo).toEqual({ src: logo.body.url, width: 96, visible: true });
    expect(shown.brand).toBe("Orchid Bank");
    expect(shown.font).toContain("Orchid Mono");
    expect(shown.loaded).toEqual(["loaded"]);
    expect(shown.uses).toBe(true);
    // the font file itself came from the service, with the year-long immutable cache
    const fontResponse = await page.evaluate(async (url) => {
      const response = await fetch(url);
      return { status: response.status, cache: response.headers.get("cache-control") };
    }, font.body.url);
    expect(fontResponse).toEqual({ status: 200, cache: "public, max-age=31536000, immutable" });

    for (const scheme of ["light", "dark"] as const) {
      await emulateScheme(page, scheme);
      expect(await accessibilityViolations(page), scheme).toEqual([]);
    }
    await photograph(page, "themed-intro");
    await page.context().close();
  }, 150_000);
});
