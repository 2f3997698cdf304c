/**
 * The merchant's console (functions/console) in Chromium, on the service's own origin as
 * http://localhost (where a `__Host-` cookie may be set): an owner signs in by proving presence on
 * the hosted screen (the fake camera lit by the screen), creates and rolls a key, adds a webhook
 * endpoint (a loopback receiver that verifies the signature), sees the test delivery in the log,
 * resends it, rotates the secret, uploads a logo and publishes a theme (seen in the page's preview,
 * both schemes, and on a hosted session's screen), revokes a mandate, invites
 * an owner and signs out. axe-core on every page in both schemes; screenshots of every page in
 * both schemes (docs/screens/console/ with UPDATE_SCREENSHOTS=1).
 *
 * The owner is enrolled through the HTTP API with the face the camera shows (computed once by the
 * device check page on the same camera), so the only capture the walk-through waits for is the
 * sign-in's own.
 */
import type { Frame, Page } from "playwright-core";
import { afterAll, beforeAll, describe, expect, inject, it } from "vitest";
import { addOwner } from "../../shared/merchants/accounts";
import { merchantFactory, testDb } from "../harness/factories";
import { enrollStranger } from "../harness/identity";
import { issue, mandateBody, proofCapture } from "../harness/mandates";
import { useOwnService } from "../harness/own-service";
import { v1 } from "../harness/resource-api";
import { completeCaptureTheme, completeMandateTheme, TEST_FONT } from "../harness/theme-fixtures";
import { expectSignedBy } from "../harness/webhook-receiver";
import { captureOnCheckPage, type GuardedBrowser, openBrowser } from "./chromium";
import { accessibilityViolations, captureThrough, emulateScheme, PHONE, photograph, waitForView } from "./hosted-screen";
import { litCamera } from "./lit-camera";

const service = useOwnService("console_page", undefined, { overrides: { WEBHOOK_ALLOW_LOOPBACK_HTTP: "1" } });
const media = inject("media");
const TIMEOUT = 600_000;

let browser: GuardedBrowser;
let origin: string;

beforeAll(async () => {
  origin = service.own.server.url.replace("127.0.0.1", "localhost");
  browser = await openBrowser(origin, { media: media.reading, viewport: PHONE });
});

afterAll(async () => {
  await browser?.close();
});

const LOGO_SVG =
  '<svg xmlns="http://www.w3.org/2000/svg" width="64" height="64" viewBox="0 0 64 64"><title>Corner</title>' +
  '<rect width="64" height="64" rx="14" fill="#0f766e"/><circle cx="32" cy="32" r="12" fill="#fff"/></svg>';

/** The console walk's complete capture theme: the uploaded logo and font. */
const completeTheme = (logo: string, font: string) =>
  completeCaptureTheme({ logo, font, brand: "Corner Shop", family: "Corner Mono", primary: "174 77% 26%" });

/** A console page: no violation in either scheme, nothing wider than the phone (tables become cards), a screenshot of it in both (or in `schemes`). */
async function checked(page: Page, name: string, schemes?: readonly ("light" | "dark")[]) {
  for (const scheme of schemes ?? []) await emulateScheme(page, scheme);
  expect(await accessibilityViolations(page), name).toEqual([]);
  const widths = await page.evaluate(() => ({ page: document.documentElement.scrollWidth, screen: document.documentElement.clientWidth }));
  expect(widths.page, `${name} scrolls sideways`).toBeLessThanOrEqual(widths.screen);
  await photograph(page, `console/${name}`, { fullPage: true, schemes });
}

/** Waits for `selector`, failing with what the page shows otherwise. */
/**
 * A theme preview's frame once its document has loaded: the draft's colours come in a style sheet of
 * their own (`theme/preview.css`), and until it has loaded the body wears the default theme's.
 */
async function loadedPreview(page: Page, selector: string): Promise<Frame> {
  const frame = await (await page.waitForSelector(selector)).contentFrame();
  if (!frame) throw new Error(`no preview frame at ${selector}`);
  await frame.waitForLoadState("load");
  return frame;
}

async function shows(page: Page, selector: string) {
  await page.waitForSelector(selector, { timeout: 60_000 }).catch(async (error: Error) => {
    throw new Error(`${error.message}; ${page.url()} shows ${(await page.content()).slice(0, 1500)}`);
  });
}

const base = () => `${origin}/functions/v1/console`;

describe("the merchant's console in a browser", () => {
  it(
    "signs in by presence, runs keys, webhooks, theme, mandates and owners, and signs out",
    async () => {
      const receiver = await service.receiver();
      const context = browser.context;
      await litCamera(context, media.light);
      const camera = await captureOnCheckPage(browser, origin, 5, { light: true });
      const face = camera.descriptor.face.embedding as number[];

      const merchant = await merchantFactory("Corner Shop");
      const owner = await enrollStranger(merchant.keys.pk_test, face);
      await addOwner(testDb(), merchant.merchant_id, owner.subject_ref, new Date());
      const customer = await enrollStranger(merchant.keys.pk_test);
      const proof = await proofCapture(merchant, customer, { document: true, terms: { agent_display_name: "Shopping assistant" } });
      const granted = await issue(merchant.keys.sk_test, mandateBody(customer, proof));
      expect(granted.status, granted.text).toBe(201);
      const mandateId = granted.body.mandate_id as string;
      const invitee = await enrollStranger(merchant.keys.pk_test);

      // Sign in: the merchant and the environment, then the check on the hosted screen in a window of its own.
      const { page } = browser;
      await page.goto(`${base()}/`);
      await shows(page, "body[data-view='sign-in']");
      await checked(page, "sign-in");
      await page.fill("input[name='merchant_id']", merchant.merchant_id);
      await page.click("button[type='submit']");
      await shows(page, "body[data-view='check']");
      await checked(page, "check");
      const screenUrl = (await page.getAttribute("#open-check", "href")) ?? "";
      const screen = await context.newPage();
      const outcome = await captureThrough(screen, screenUrl, 5);
      expect(outcome, JSON.stringify(outcome)).toMatchObject({ kind: "approved" });
      await screen.close();
      await page.click("#continue");
      await shows(page, "#mode");
      expect(await page.textContent("#mode")).toContain("Test mode");
      await checked(page, "overview");

      // Keys: create one (shown once), roll it.
      await page.goto(`${base()}/keys`);
      await page.fill("input[name='name']", "Dashboard");
      await page.click("form[action$='/keys'] button[type='submit']");
      const key = (await page.textContent("#new-key")) ?? "";
      expect(key).toMatch(/^sk_test_/);
      await checked(page, "keys-created");
      await page.fill("form[action*='/roll'] input[name='overlap_hours']", "1");
      await page.click("form[action*='/roll'] button[type='submit']");
      const rolled = (await page.textContent("#new-key")) ?? "";
      expect(rolled).toMatch(/^sk_test_/);
      expect(rolled).not.toBe(key);

      // Webhooks: an endpoint at the receiver; a test event delivered, signed, in the log; resent; the secret rotated.
      await page.goto(`${base()}/webhooks`);
      // A refused endpoint (plain http, not a loopback receiver) is a page (D-700): the message focused, the way back keeps the URL.
      await page.fill("input[name='url']", "http://shop.example/hook");
      const refused = page.waitForResponse((response) => response.request().method() === "POST");
      await page.click("form[action$='/webhooks'] button[type='submit']");
      expect((await refused).status()).toBe(400);
      await shows(page, "body[data-view='problem'][data-problem='input']");
      expect(await page.evaluate(() => document.activeElement?.id)).toBe("problem");
      expect(await page.textContent("#problem-code")).toContain("INVALID_INPUT");
      await checked(page, "refused");
      await page.click("#problem-back");
      await page.waitForURL(/\/webhooks\?url=/);
      expect(await page.inputValue("input[name='url']")).toBe("http://shop.example/hook");
      await page.fill("input[name='url']", receiver.url);
      await page.fill("input[name='event_types']", "webhook.test, mandate.revoked");
      await page.click("form[action$='/webhooks'] button[type='submit']");
      const secret = (await page.textContent("#new-secret")) ?? "";
      expect(secret).toMatch(/^whsec_/);
      await page.click("form[action$='/test'] button");
      await page.waitForURL(/done=test/);
      const deliver = async (count: number) => {
        for (let tick = 0; tick < 10 && receiver.received.length < count; tick++)
          await service.own.tick("session-expiry-and-webhooks", new Date());
        expect(receiver.received.length).toBeGreaterThanOrEqual(count);
      };
      await deliver(1);
      await expectSignedBy(receiver.received[0], [secret], new Date());
      expect(receiver.received[0].envelope.type).toBe("webhook.test");
      await page.reload();
      await page.click("a[href*='/deliveries/']");
      await page.waitForSelector("#payload");
      expect(await page.textContent("#payload")).toContain("webhook.test");
      await checked(page, "delivery");
      await page.click("form[action$='/resend'] button");
      await page.waitForURL(/done=resent/);
      await deliver(2);
      await expectSignedBy(receiver.received[1], [secret], new Date());
      await checked(page, "webhook");
      await page.click("form[action$='/rotate'] button");
      expect((await page.textContent("#new-secret")) ?? "").toMatch(/^whsec_/);
      expect(await page.textContent("#new-secret")).not.toBe(secret);

      // Theme: a logo uploaded through the page, a complete draft published.
      const font = await v1("/theme_assets", {
        key: merchant.keys.sk_test,
        body: { kind: "font", content_type: "font/woff2", data: TEST_FONT.toString("base64"), family: "Corner Mono" },
        headers: { "idempotency-key": `font-${crypto.randomUUID()}` },
      });
      expect(font.status, font.text).toBe(201);
      await page.goto(`${base()}/theme`);
      await page.setInputFiles("#upload input[type='file']", {
        name: "logo.svg",
        mimeType: "image/svg+xml",
        buffer: Buffer.from(LOGO_SVG),
      });
      await page.click("#upload button");
      await page.waitForURL(/uploaded=ta_/);
      const logo = new URL(page.url()).searchParams.get("uploaded") ?? "";
      await page.fill("#theme-draft", JSON.stringify(completeTheme(logo, font.body.id), null, 2));
      await page.click("button[value='publish']");
      await shows(page, "p.notice");
      const themes = await v1("/themes/capture", { key: merchant.keys.sk_test });
      expect(themes.body.published?.theme).toMatchObject({ brand_name: "Corner Shop", logo_square_url: logo });
      // Where the service serves the uploaded logo (its path: the API was asked on another host name).
      const listed = await v1("/theme_assets", { key: merchant.keys.sk_test });
      const logoPath = new URL(listed.body.data.find((asset: { id: string }) => asset.id === logo).url).pathname;
      // The preview: the hosted screen's introduction in the theme, one frame per scheme (D-670).
      const previews = await Promise.all(
        (["light", "dark"] as const).map(async (scheme) => {
          const frame = await loadedPreview(page, `iframe[src*='scheme=${scheme}']`);
          await frame.waitForFunction(() => {
            const image = document.getElementById("logo") as HTMLImageElement;
            return image.complete && image.naturalWidth > 0;
          });
          await frame.evaluate(() => document.fonts.ready);
          return frame.evaluate(() => ({
            view: document.body.dataset.state,
            logo: (document.getElementById("logo") as HTMLImageElement).src,
            brand: document.getElementById("brand-name")?.textContent,
            title: getComputedStyle(document.getElementById("intro-title")!).fontFamily,
            font: document.fonts.check('16px "Corner Mono"'),
            background: getComputedStyle(document.body).backgroundColor,
          }));
        }),
      );
      for (const preview of previews) {
        expect(preview).toMatchObject({ view: "intro", brand: "Corner Shop", font: true });
        expect(preview.logo).toBe(`${origin}${logoPath}`);
        expect(preview.title).toContain("Corner Mono");
      }
      expect(previews.map((preview) => preview.background)).toEqual(["rgb(255, 255, 255)", "rgb(0, 0, 0)"]);
      await checked(page, "theme");
      await page.locator(".preview").screenshot({ path: "dist/screens/console/theme-preview.png" });

      // The mandate surface's draft on a mandate session's introduction (D-701): the agent, its terms, the draft's colours.
      await page.goto(`${base()}/theme?surface=mandate`);
      const mandateTheme = completeMandateTheme({
        logo,
        font: font.body.id,
        brand: "Corner Agents",
        family: "Corner Mono",
        primary: "262 83% 40%",
      });
      await page.fill("#theme-draft", JSON.stringify(mandateTheme, null, 2));
      await page.click("button[value='save']");
      await shows(page, "p.notice");
      const mandatePreviews = await Promise.all(
        (["light", "dark"] as const).map(async (scheme) => {
          const frame = await loadedPreview(page, `iframe[src*='surface=mandate'][src*='scheme=${scheme}']`);
          await frame.waitForSelector("#intro-terms dt");
          return frame.evaluate(() => ({
            view: document.body.dataset.state,
            brand: document.getElementById("brand-name")?.textContent,
            title: document.getElementById("intro-title")?.textContent,
            terms: [...document.querySelectorAll("#intro-terms dt")].map((dt) => dt.textContent),
            shown: !(document.getElementById("intro-terms") as HTMLElement).hidden,
            background: getComputedStyle(document.body).backgroundColor,
          }));
        }),
      );
      for (const preview of mandatePreviews) {
        expect(preview).toMatchObject({
          view: "intro",
          brand: "Corner Agents",
          title: "Allow Shopping assistant to act for you",
          shown: true,
        });
        expect(preview.terms).toEqual(["Agent", "It may", "Limit", "Until"]);
      }
      expect(mandatePreviews.map((preview) => preview.background)).toEqual(["rgb(255, 255, 255)", "rgb(0, 0, 0)"]);
      await checked(page, "theme-mandate");

      // The published theme on the hosted screen of a session of this merchant: its logo and its font, from the service's origin.
      const session = await v1("/sessions", {
        key: merchant.keys.sk_test,
        body: { mode: "claim", return_url: "https://shop.example/back" },
      });
      expect(session.status, session.text).toBe(201);
      const hosted = await context.newPage();
      // On the origin the browser is allowed (localhost, as the console), the session token in the fragment as given.
      const sessionUrl = new URL(session.body.url);
      await hosted.goto(`${origin}${sessionUrl.pathname}${sessionUrl.search}${sessionUrl.hash}`);
      await waitForView(hosted, "intro");
      await hosted.waitForFunction(
        () => (document.getElementById("logo") as HTMLImageElement).complete && !document.getElementById("logo")!.hidden,
      );
      await hosted.evaluate(() => document.fonts.ready);
      const onScreen = await hosted.evaluate(() => ({
        logo: (document.getElementById("logo") as HTMLImageElement).src,
        width: (document.getElementById("logo") as HTMLImageElement).naturalWidth,
        brand: document.getElementById("brand-name")?.textContent,
        title: getComputedStyle(document.getElementById("intro-title")!).fontFamily,
        font: document.fonts.check('16px "Corner Mono"'),
      }));
      expect(onScreen.logo).toBe(`${origin}${logoPath}`);
      expect(onScreen).toMatchObject({ width: 64, brand: "Corner Shop", font: true });
      expect(onScreen.title).toContain("Corner Mono");
      await hosted.close();

      // Mandates: found by the person, revoked.
      await page.goto(`${base()}/mandates?granted_by=${customer.subject_ref}`);
      await checked(page, "mandates");
      await page.click(`a[href$='/mandates/${mandateId}']`);
      await page.fill("input[name='reason']", "Asked by the customer");
      await page.click("form[action$='/revoke'] button");
      await shows(page, "#mandate-status");
      expect(await page.textContent("#mandate-status")).toBe("revoked");

      // Owners: an invitation by subject_ref.
      await page.goto(`${base()}/owners`);
      await page.fill("input[name='subject_ref']", invitee.subject_ref);
      await page.fill("input[name='return_url']", "https://shop.example/owners");
      await page.click("form[action$='/owners/invite'] button");
      expect((await page.textContent("#invitation-url")) ?? "").toContain("/functions/v1/hosted-capture/");
      await checked(page, "owners");

      for (const section of ["sessions", "receipts", "consents", "audit"]) {
        await page.goto(`${base()}/${section}`);
        await checked(page, section);
      }
      expect(await page.textContent("main")).toContain("mandate.revoked");

      // The pages in Portuguese (light) and Spanish (dark): the same session in a browser of each language.
      for (const [locale, scheme] of [
        ["pt-BR", "light"],
        ["es", "dark"],
      ] as const) {
        const localized = await browser.newPage({ locale, viewport: PHONE });
        await localized.context().addCookies(await context.cookies());
        for (const section of ["", "keys", "webhooks", "theme"]) {
          await localized.goto(`${base()}/${section}`);
          await shows(localized, "#mode");
          expect(await localized.getAttribute("html", "lang")).toBe(locale);
          await checked(localized, `${locale}/${section || "overview"}`, [scheme]);
        }
        await localized.close();
      }

      // Sign out: the sign-in page, and the console refuses the old session.
      await page.click("header form:not(:has(input[name='everywhere'])) button");
      await shows(page, "body[data-view='sign-in']");
      expect(await page.textContent("main")).toContain("You are signed out.");
      await page.goto(`${base()}/keys`);
      await shows(page, "body[data-view='sign-in']");
      expect(browser.foreign).toEqual([]);
    },
    TIMEOUT,
  );
});
