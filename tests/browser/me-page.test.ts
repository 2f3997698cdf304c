/**
 * The person's page (functions/me) in Chromium, on the service's own origin as http://localhost
 * (where a `__Host-` cookie may be set): a person enrolled at two merchants with a mandate to a
 * different agent at each opens the page from the first merchant's link, signs in by proving
 * presence on the hosted screen (the fake camera lit by the screen), sees both
 * merchants and both agents, revokes one mandate (the merchant's endpoint receives
 * `mandate.revoked`, the agent's next consume is refused), withdraws consent at the other merchant
 * (`consent.withdrawn`), downloads the export and reads it. axe-core on the page in each scheme;
 * screenshots in three locales and both schemes.
 *
 * The person is enrolled through the HTTP API with the face the camera shows (computed once by the
 * device check page on the same camera), so the only capture the walk-through waits for is the
 * sign-in's own.
 */
import { readFile } from "node:fs/promises";
import type { Page } from "playwright-core";
import { afterAll, beforeAll, describe, expect, inject, it } from "vitest";
import { ME_LINK_PARAMS } from "../../shared/contracts/me";
import { merchantFactory, testDb } from "../harness/factories";
import { enrollStranger } from "../harness/identity";
import { consume, issue, mandateBody, proofCapture } from "../harness/mandates";
import { useOwnService } from "../harness/own-service";
import { captureOnCheckPage, type GuardedBrowser, openBrowser } from "./chromium";
import { accessibilityViolations, emulateScheme, outcomeOf, PHONE, photograph, startReading, waitForView } from "./hosted-screen";
import { litCamera } from "./lit-camera";

const service = useOwnService("me_page");
const media = inject("media");
const TIMEOUT = 240_000;

let browser: GuardedBrowser;
let origin: string;

beforeAll(async () => {
  origin = service.own.server.url.replace("127.0.0.1", "localhost");
  browser = await openBrowser(origin, { media: media.reading, viewport: PHONE });
});

afterAll(async () => {
  await browser?.close();
});

type Merchant = Awaited<ReturnType<typeof merchantFactory>>;
type Person = Awaited<ReturnType<typeof enrollStranger>>;

async function grant(merchant: Merchant, person: Person, terms: Record<string, unknown>) {
  const captureId = await proofCapture(merchant, person, { document: true, terms });
  const res = await issue(merchant.keys.sk_test, mandateBody(person, captureId));
  expect(res.status, res.text).toBe(201);
  return res.body as { mandate_id: string; granted_to: string };
}

/** The page's link at `merchant` (the one a merchant puts behind "manage what you authorised"). */
const linkOf = (merchant: Merchant) =>
  `${origin}/functions/v1/me?${ME_LINK_PARAMS.merchant}=${merchant.merchant_id}&${ME_LINK_PARAMS.environment}=test`;

/** Clicks `selector` and confirms in the dialog, which must say `says`. */
async function confirmIn(page: Page, selector: string, says: RegExp) {
  await page.click(selector);
  await page.waitForSelector("#confirm[open]");
  expect(await page.textContent("#confirm")).toMatch(says);
  await page.click("#confirm-yes");
}

describe("the person's page in a browser", () => {
  it(
    "signs in by presence, revokes a mandate, withdraws a consent and downloads the export; the merchants hear of it",
    async () => {
      const [shop, travel] = await Promise.all([merchantFactory("Corner Shop"), merchantFactory("Travel Desk")]);
      const shopReceiver = await service.receiver();
      await service.endpointFor(shop.merchant_id, shopReceiver.url);
      const travelReceiver = await service.receiver();
      await service.endpointFor(travel.merchant_id, travelReceiver.url);

      // The face the camera shows, as the client computes it.
      const context = browser.context;
      await litCamera(context, media.light);
      const checked = await captureOnCheckPage(browser, origin, 5, { light: true });
      const face = checked.descriptor.face.embedding as number[];
      expect(face).toHaveLength(128);

      const atShop = await enrollStranger(shop.keys.pk_test, face);
      const atTravel = await enrollStranger(travel.keys.pk_test, face);
      const shopping = await grant(shop, atShop, { agent_display_name: "Shopping assistant" });
      const booking = await grant(travel, atTravel, { agent_display_name: "Trip planner" });

      // From the shop's link: the sign-in, its screen in a window of its own.
      const { page } = browser;
      await page.goto(linkOf(shop));
      await page.waitForSelector("body[data-view='signed-out']");
      expect(await page.getAttribute("html", "lang")).toBe("en");
      await photograph(page, "me/en-sign-in");
      expect(await accessibilityViolations(page)).toEqual([]);
      // The screen in this tab (a browser that blocks the second window, D-543): the page keeps the
      // sign-in's id and finishes it when the person comes back to it.
      await page.evaluate(() => {
        window.open = () => null;
      });
      await page.click("#sign-in");
      await waitForView(page, "intro");
      await page.click("#continue");
      await waitForView(page, "capture");
      await startReading(page);
      await waitForView(page, "outcome", 90_000);
      const signInOutcome = await outcomeOf(page);
      expect(signInOutcome, JSON.stringify(signInOutcome)).toMatchObject({ kind: "approved" });
      await page.goto(linkOf(shop));
      await page.waitForSelector("body[data-view='signed-in']", { timeout: 30_000 }).catch(async (error: Error) => {
        throw new Error(`${error.message}; the page says ${await page.textContent("main")}`);
      });

      // Both merchants, both agents, in words; no merchant's pseudonym for the person.
      const text = await page.textContent("main");
      for (const words of ["Corner Shop", "Travel Desk", "Shopping assistant", "Trip planner", "Make purchases", "Checked: all"]) {
        expect(text).toContain(words);
      }
      expect(text).not.toContain(atShop.subject_ref);
      expect(text).not.toContain(atTravel.subject_ref);
      expect(await page.locator(`[data-mandate='${shopping.mandate_id}'] .status`).textContent()).toBe("Active");
      await photograph(page, "me/en-signed-in", { fullPage: true });
      expect(await accessibilityViolations(page)).toEqual([]);

      // Revoke the shop's mandate: said first, then gone; the agent's next consume is refused; the shop hears.
      await confirmIn(page, `[data-mandate='${shopping.mandate_id}'] [data-action='revoke']`, /Its next request is refused/);
      await page.waitForSelector(`[data-mandate='${shopping.mandate_id}'][data-status='revoked']`);
      await page.waitForFunction(() => document.getElementById("notice")?.textContent?.includes("Corner Shop has been told"));
      const next = await consume(shop.keys.sk_test, { mandate_id: shopping.mandate_id, scope: "purchase", amount: 1, currency: "USD" });
      expect(next.body).toMatchObject({ allowed: false, reason: "mandate_revoked" });
      expect(
        (await consume(travel.keys.sk_test, { mandate_id: booking.mandate_id, scope: "purchase", amount: 1, currency: "USD" })).body
          .allowed,
        "the other agent's mandate stands",
      ).toBe(true);

      // Withdraw at the travel desk: the consequences (the standing mandate among them) before the confirmation.
      await confirmIn(
        page,
        `[data-merchant='${travel.merchant_id}'] [data-action='withdraw']`,
        /can no longer recognise you[\s\S]*\(1 standing\)/,
      );
      await page.waitForSelector(`[data-merchant='${travel.merchant_id}'][data-consent='revoked']`);
      expect(await page.textContent("#ledger")).toContain("Consent withdrawn");

      // The outbox delivered: each merchant's endpoint has heard what concerns it.
      const heardOf = async (receiver: typeof shopReceiver, type: string) => {
        for (let tick = 0; tick < 5 && !receiver.received.some((request) => request.envelope.type === type); tick++) {
          await service.own.tick("session-expiry-and-webhooks", new Date());
        }
      };
      await heardOf(shopReceiver, "mandate.revoked");
      await heardOf(travelReceiver, "consent.withdrawn");
      const heard = (receiver: typeof shopReceiver) => receiver.received.map((request) => request.envelope);
      expect(heard(shopReceiver).filter((e) => e.type === "mandate.revoked")).toEqual([
        expect.objectContaining({ data: expect.objectContaining({ mandate_id: shopping.mandate_id, revoked_by: "granting_human" }) }),
      ]);
      expect(heard(travelReceiver).filter((e) => e.type === "consent.withdrawn")).toEqual([
        expect.objectContaining({ data: expect.objectContaining({ subject_ref: atTravel.subject_ref, withdrawn_by: "person" }) }),
      ]);
      expect(
        heard(travelReceiver).map((e) => e.type),
        "the travel desk hears nothing of the shop",
      ).not.toContain("mandate.revoked");

      // The export: made on request, downloaded once, read.
      const [download] = await Promise.all([page.waitForEvent("download"), page.click("#export")]);
      const file = JSON.parse(await readFile((await download.path())!, "utf8"));
      expect(file).toMatchObject({ format: "me-export/1", environment: "test" });
      expect(file.mandates.map((m: { mandate_id: string }) => m.mandate_id).sort()).toEqual(
        [shopping.mandate_id, booking.mandate_id].sort(),
      );
      expect(file.merchants.map((m: { subject_ref: string }) => m.subject_ref).sort()).toEqual(
        [atShop.subject_ref, atTravel.subject_ref].sort(),
      );
      const [left] = await testDb()`select count(*)::int as n from private.person_exports where content is not null`;
      expect(left.n, "downloaded once: its content is gone").toBe(0);

      // The page after the changes, in each locale, light and dark (the session's cookie is this context's).
      await photograph(page, "me/en-after", { fullPage: true });
      for (const [lang, accept] of [
        ["pt-BR", "pt-BR"],
        ["es", "es-ES"],
      ] as const) {
        await page.unroute("**/functions/v1/me**");
        await page.route("**/functions/v1/me**", (route) =>
          route.continue({ headers: { ...route.request().headers(), "accept-language": accept } }),
        );
        await page.reload();
        await page.waitForSelector("body[data-view='signed-in']");
        expect(await page.getAttribute("html", "lang")).toBe(lang);
        await photograph(page, `me/${lang}-signed-in`, { fullPage: true });
        expect(await accessibilityViolations(page)).toEqual([]);
      }
      await page.unroute("**/functions/v1/me**");
      await emulateScheme(page, "light");
    },
    TIMEOUT,
  );
});
