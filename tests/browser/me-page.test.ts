/**
 * The person's page (functions/me) in Chromium, on the service's own origin as http://localhost
 * (where a `__Host-` cookie may be set and a passkey's RP ID is valid), the capture screen on the
 * fake camera lit by the screen. Three walks, each with its own browser context, persons and merchants:
 *
 * - A person enrolled at two merchants with a mandate to a different agent at each opens the page
 *   from the first merchant's link, signs in by presence (the screen in the same tab, as when the
 *   browser blocks the second window), sees both merchants and both agents, revokes one mandate
 *   (the merchant's endpoint receives `mandate.revoked`, the agent's next consume is refused),
 *   withdraws consent at the other merchant (`consent.withdrawn`), downloads the export and reads
 *   it; the page in three locales.
 * - A person with a registered passkey opens the page with no merchant's link and signs in with
 *   it (a CDP virtual authenticator holding the seeded credential; the screen, in a window of its
 *   own, confirms the face); renames and removes devices (`device.revoked`); then, by keyboard
 *   only, reaches a revoke button, cancels with Escape and with "Keep it" (the focus back on the
 *   button each time) and confirms.
 * - A person signs in from a merchant's link (the screen in a window of its own), withdraws at the
 *   other merchant and erases themselves at the first: the consequences said in the confirmation,
 *   a fresh presence proof (its screen in the same tab, the page finishing the erasure when the
 *   person comes back); the merchant's next calls see it, it hears `identity.erased`, and the
 *   database holds nothing identifying the person there.
 *
 * axe-core on every screen reached, in each scheme; screenshots in docs/screens/me/ (both schemes).
 * The persons are enrolled through the HTTP API with the face the camera shows (computed once per
 * file by the device check page on the same camera), so the only captures waited for are the
 * page's own, each of 15 s (the length the engine's v2 figures are measured at, as the other walks
 * read) rather than the screen's default 20: the captures are the way in, not what is tested here.
 */
import { readFile } from "node:fs/promises";
import type { Page } from "playwright-core";
import { afterAll, beforeAll, describe, expect, inject, it } from "vitest";
import { ME_LINK_PARAMS } from "../../shared/contracts/me";
import { seedDevice } from "../harness/devices";
import { merchantFactory, testDb } from "../harness/factories";
import { enrollStranger } from "../harness/identity";
import { consume, issue, mandateBody, proofCapture } from "../harness/mandates";
import { identifies, identifyingRows, NOTHING_IDENTIFYING, personWithPasskey } from "../harness/me";
import { useOwnService } from "../harness/own-service";
import type { Receiver } from "../harness/webhook-receiver";
import { captureOnCheckPage, type GuardedBrowser, openBrowser } from "./chromium";
import { accessibilityViolations, outcomeOf, PHONE, photograph, readingSecondsOf, startReading, waitForView } from "./hosted-screen";
import { litCamera } from "./lit-camera";
import { addVirtualAuthenticator, holdPasskey } from "./passkeys";

const service = useOwnService("me_page");
const media = inject("media");
const TIMEOUT = 240_000;
/** The length of every capture the page's screens record. */
const READING_SECONDS = 15;

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

/** The face the camera shows, as the client computes it: once per file (a retried walk reuses it). */
let cameraFace: number[] | undefined;
async function faceOnCamera(page: Page): Promise<number[]> {
  if (!cameraFace) {
    const checked = await captureOnCheckPage(browser, origin, 5, { light: true, page });
    const face = checked.descriptor.face.embedding as number[];
    expect(face).toHaveLength(128);
    cameraFace = face;
  }
  return cameraFace;
}

/**
 * A page of its own (its cookies, its storage) with the lit camera in every window it opens, the
 * camera's face computed, and nobody enrolled with that face yet. Each walk starts here, so a
 * retried or reordered walk depends on no other: the camera shows one face, and an enrolment
 * attaches a known face to the identity it already has (D-465), so every identity an earlier walk
 * left in this file's own database is first left as an erasure leaves it (its template deleted,
 * marked erased), and the walk's enrolments make a new one.
 */
async function freshPage(): Promise<{ page: Page; face: number[] }> {
  const page = await browser.newPage({ viewport: PHONE });
  await litCamera(page.context(), media.light);
  await readingSecondsOf(page.context(), READING_SECONDS);
  const face = await faceOnCamera(page);
  const db = testDb();
  await db`delete from private.face_templates where environment = 'test'`;
  await db`update private.identities set erased_at = now() where environment = 'test' and erased_at is null`;
  return { page, face };
}

async function grant(merchant: Merchant, person: Person, terms: Record<string, unknown>) {
  const captureId = await proofCapture(merchant, person, { document: true, terms });
  const res = await issue(merchant.keys.sk_test, mandateBody(person, captureId));
  expect(res.status, res.text).toBe(201);
  return res.body as { mandate_id: string; granted_to: string };
}

/** A merchant whose webhook endpoint is a fresh receiver of this file's service. */
async function listening(name: string): Promise<{ merchant: Merchant; receiver: Receiver }> {
  const merchant = await merchantFactory(name);
  const receiver = await service.receiver();
  await service.endpointFor(merchant.merchant_id, receiver.url);
  return { merchant, receiver };
}

/** Ticks the outbox until `receiver` has an event of `type` (at most five ticks). */
async function heardOf(receiver: Receiver, type: string): Promise<void> {
  for (let tick = 0; tick < 5 && !receiver.received.some((request) => request.envelope.type === type); tick++) {
    await service.own.tick("session-expiry-and-webhooks", new Date());
  }
}
const heard = (receiver: Receiver) => receiver.received.map((request) => request.envelope);

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

/**
 * The capture screen the page opens in a window of its own (D-543) when `open` runs: the person
 * proves presence there. The page closes the window once the service has the answer, so the
 * screen's own outcome may never be seen: the page's next state is what the caller waits for.
 */
async function proveInItsWindow(page: Page, open: () => Promise<unknown>): Promise<void> {
  const [screen] = await Promise.all([page.waitForEvent("popup", { timeout: 60_000 }), open()]);
  const state = () =>
    screen.evaluate(() => ({
      visibility: document.visibilityState,
      focus: document.hasFocus(),
      size: [innerWidth, innerHeight],
      guidance: document.getElementById("guidance")?.textContent,
      trace: (() => {
        const trace = (globalThis as { litCameraTrace?: { shown: unknown[]; relitFrames: unknown[] } }).litCameraTrace;
        return trace ? [trace.shown.length, trace.relitFrames.length] : null;
      })(),
      url: location.href.split("#")[0],
    }));
  await waitForView(screen, "intro");
  await screen.click("#continue");
  await waitForView(screen, "capture");
  const completed = screen.waitForResponse((response) => response.url().endsWith("/hosted-capture/complete"), { timeout: 180_000 });
  await startReading(screen).catch(async (error: Error) => {
    throw new Error(`${error.message}; the screen: ${JSON.stringify(await state())}`);
  });
  const ended = (await (await completed).json()) as { state: string; outcome: Record<string, unknown> };
  expect(ended, JSON.stringify(ended)).toMatchObject({ state: "completed", outcome: { approved: true } });
}

/** Waits until the page shows `view`, failing with what it says otherwise. */
async function waitForPage(page: Page, view: "signed-in" | "signed-out", timeout = 120_000) {
  await page.waitForSelector(`body[data-view='${view}']`, { timeout }).catch(async (error: Error) => {
    throw new Error(`${error.message}; the page says ${await page.textContent("main")}`);
  });
}

/** The element that has the focus, as a CSS-free description the assertions compare. */
const focused = (page: Page) =>
  page.evaluate(() => {
    const active = document.activeElement as HTMLElement | null;
    return {
      id: active?.id ?? "",
      action: active?.dataset.action ?? "",
      mandate: active?.closest<HTMLElement>("[data-mandate]")?.dataset.mandate ?? "",
      device: active?.closest<HTMLElement>("[data-device]")?.dataset.device ?? "",
      tag: active?.tagName.toLowerCase() ?? "",
    };
  });

/** Presses Tab until the focus is on `selector` (at most `max` presses): the control is reachable by keyboard. */
async function tabTo(page: Page, selector: string, max = 80): Promise<void> {
  for (let press = 0; press < max; press++) {
    await page.keyboard.press("Tab");
    if (await page.evaluate((wanted) => document.activeElement?.matches(wanted) ?? false, selector)) return;
  }
  throw new Error(`${selector} is not reached by Tab in ${max} presses`);
}

describe("the person's page in a browser", () => {
  it(
    "signs in by presence, revokes a mandate, withdraws a consent and downloads the export; the merchants hear of it",
    async () => {
      const [{ merchant: shop, receiver: shopReceiver }, { merchant: travel, receiver: travelReceiver }] = await Promise.all([
        listening("Corner Shop"),
        listening("Travel Desk"),
      ]);
      const { page, face } = await freshPage();
      const atShop = await enrollStranger(shop.keys.pk_test, face);
      const atTravel = await enrollStranger(travel.keys.pk_test, face);
      const shopping = await grant(shop, atShop, { agent_display_name: "Shopping assistant" });
      const booking = await grant(travel, atTravel, { agent_display_name: "Trip planner" });

      // From the shop's link: the sign-in.
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
      await waitForPage(page, "signed-in", 30_000);

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
      await heardOf(shopReceiver, "mandate.revoked");
      await heardOf(travelReceiver, "consent.withdrawn");
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
      await page.context().close();
    },
    TIMEOUT,
  );

  it(
    "signs in with the person's passkey and no merchant's link; renames and removes devices; revokes by keyboard alone",
    async () => {
      const [{ merchant: shop, receiver: shopReceiver }, { merchant: travel, receiver: travelReceiver }] = await Promise.all([
        listening("Corner Shop"),
        listening("Travel Desk"),
      ]);
      const { page, face } = await freshPage();
      // The person's passkey, registered with the user handle the service issued (it names them), and an older laptop's.
      const { person: atShop, identityId, userHandle, credential, device: phone } = await personWithPasskey(shop, face);
      const { credential: laptopKey, device: laptop } = await seedDevice(shop.merchant_id, "test", identityId);
      const atTravel = await enrollStranger(travel.keys.pk_test, face);
      const shopping = await grant(shop, atShop, { agent_display_name: "Shopping assistant" });
      await grant(travel, atTravel, { agent_display_name: "Trip planner" });

      // This device holds the passkey: a platform authenticator with the credential, for the service's RP ID.
      const authenticator = await addVirtualAuthenticator(page);
      await holdPasskey(authenticator, credential, { rpId: new URL(origin).hostname, userHandle });

      // No merchant's link: the passkey is the way in, and the page says so.
      await page.goto(`${origin}/functions/v1/me?${ME_LINK_PARAMS.environment}=test`);
      await page.waitForSelector("body[data-view='signed-out']");
      expect(await page.isVisible("#sign-in-passkey")).toBe(true);
      expect(await page.isVisible("#sign-in")).toBe(false);
      expect(await page.textContent("#sign-in-nolink")).toContain("Sign in with a passkey");
      await photograph(page, "me/en-sign-in-passkey");
      expect(await accessibilityViolations(page)).toEqual([]);

      // The passkey says who; the screen, in a window of its own, confirms the face 1:1.
      await proveInItsWindow(page, () => page.click("#sign-in-passkey"));
      await waitForPage(page, "signed-in");
      const [session] = await testDb()`select s.proof, d.credential_id from private.person_sessions s
        join private.device_credentials d on d.id = s.device_id
        where s.identity_id = ${identityId} and s.ended_at is null order by s.created_at desc limit 1`;
      expect(session).toEqual({ proof: "passkey", credential_id: credential.id });
      const [used] = await authenticator.credentials();
      expect(used.signCount, "the authenticator signed the sign-in").toBeGreaterThan(0);
      expect(await page.textContent("main")).toContain("Shopping assistant");

      // Devices: both listed; rename the phone by keyboard (its form takes the focus, Enter saves).
      for (const device of [phone, laptop]) {
        expect(await page.getAttribute(`[data-device='${device.device_id}']`, "data-standing")).toBe("true");
      }
      await tabTo(page, `[data-device='${phone.device_id}'] [data-action='rename-device']`);
      await page.keyboard.press("Enter");
      expect(await focused(page)).toMatchObject({ tag: "input", device: phone.device_id });
      expect(await accessibilityViolations(page), "the rename form").toEqual([]);
      expect(await focused(page), "axe left the focus where it was").toMatchObject({ tag: "input", device: phone.device_id });
      await page.keyboard.type("My phone");
      await page.keyboard.press("Enter");
      await page.waitForFunction(() => document.getElementById("notice")?.textContent === "Renamed: My phone.");
      expect(await page.textContent(`[data-device='${phone.device_id}'] h3`)).toBe("My phone");
      expect(await focused(page)).toMatchObject({ id: "devices-title" });

      // Remove the laptop: said first; the merchants that hold the person hear it.
      await confirmIn(page, `[data-device='${laptop.device_id}'] [data-action='remove-device']`, /can no longer confirm it is you/);
      await page.waitForSelector(`[data-device='${laptop.device_id}'][data-standing='false']`);
      expect(await page.getAttribute(`[data-device='${phone.device_id}']`, "data-standing")).toBe("true");
      const [row] = await testDb()`select revoked_at is not null as revoked from private.device_credentials
        where credential_id = ${laptopKey.id}`;
      expect(row.revoked).toBe(true);
      await page.locator("#devices").scrollIntoViewIfNeeded();
      await photograph(page, "me/en-devices");
      expect(await accessibilityViolations(page)).toEqual([]);
      for (const receiver of [shopReceiver, travelReceiver]) {
        await heardOf(receiver, "device.revoked");
        expect(heard(receiver).filter((e) => e.type === "device.revoked")).toEqual([
          expect.objectContaining({ data: expect.objectContaining({ device_id: laptop.device_id }) }),
        ]);
      }

      // Keyboard only: Tab reaches the shop's revoke button from the page's heading; Enter asks first,
      // with the focus on the button that keeps things as they are.
      const revoke = `[data-mandate='${shopping.mandate_id}'] [data-action='revoke']`;
      await page.focus("section[data-view='signed-in'] h1");
      await tabTo(page, revoke);
      await page.keyboard.press("Enter");
      await page.waitForSelector("#confirm[open]");
      expect(await focused(page)).toMatchObject({ id: "confirm-no" });
      expect(await page.textContent("#confirm")).toMatch(/Shopping assistant can no longer make purchases at Corner Shop/);
      await photograph(page, "me/en-confirm-revoke");
      expect(await accessibilityViolations(page)).toEqual([]);
      // Escape cancels: nothing revoked, the focus back on the button.
      await page.keyboard.press("Escape");
      await page.waitForFunction(() => !(document.getElementById("confirm") as HTMLDialogElement).open);
      expect(await focused(page)).toMatchObject({ action: "revoke", mandate: shopping.mandate_id });
      // "Keep it" by Enter: the same.
      await page.keyboard.press("Enter");
      await page.waitForSelector("#confirm[open]");
      await page.keyboard.press("Enter");
      await page.waitForFunction(() => !(document.getElementById("confirm") as HTMLDialogElement).open);
      expect(await focused(page)).toMatchObject({ action: "revoke", mandate: shopping.mandate_id });
      expect(await page.getAttribute(`[data-mandate='${shopping.mandate_id}']`, "data-status")).toBe("active");
      // Confirmed: Shift+Tab to the confirming button, Enter; the focus goes to the section's heading.
      await page.keyboard.press("Enter");
      await page.waitForSelector("#confirm[open]");
      await page.keyboard.press("Shift+Tab");
      expect(await focused(page)).toMatchObject({ id: "confirm-yes" });
      await page.keyboard.press("Enter");
      await page.waitForSelector(`[data-mandate='${shopping.mandate_id}'][data-status='revoked']`);
      await page.waitForFunction(() => document.activeElement?.id === "agents-title");
      const next = await consume(shop.keys.sk_test, { mandate_id: shopping.mandate_id, scope: "purchase", amount: 1, currency: "USD" });
      expect(next.body).toMatchObject({ allowed: false, reason: "mandate_revoked" });
      await page.context().close();
    },
    TIMEOUT,
  );

  it(
    "withdraws at one merchant and erases themselves at the other: said first, a fresh presence proof; the merchant sees it, nothing identifying stays",
    async () => {
      const [{ merchant: shop, receiver: shopReceiver }, { merchant: travel, receiver: travelReceiver }] = await Promise.all([
        listening("Corner Shop"),
        listening("Travel Desk"),
      ]);
      const { page, face } = await freshPage();
      const atShop = await enrollStranger(shop.keys.pk_test, face);
      const atTravel = await enrollStranger(travel.keys.pk_test, face);
      const shopping = await grant(shop, atShop, { agent_display_name: "Shopping assistant" });
      await grant(travel, atTravel, { agent_display_name: "Trip planner" });
      const [{ identity_id: identityId }] =
        await testDb()`select identity_id from private.subject_refs where subject_ref = ${atShop.subject_ref}`;

      // Signed in from the shop's link, the screen in a window of its own (D-543).
      await page.goto(linkOf(shop));
      await page.waitForSelector("body[data-view='signed-out']");
      await proveInItsWindow(page, () => page.click("#sign-in"));
      await waitForPage(page, "signed-in");

      // Withdraw at the travel desk: its confirmation is a screen of its own for axe too.
      await page.click(`[data-merchant='${travel.merchant_id}'] [data-action='withdraw']`);
      await page.waitForSelector("#confirm[open]");
      expect(await page.textContent("#confirm")).toMatch(/can no longer recognise you/);
      expect(await accessibilityViolations(page)).toEqual([]);
      await page.click("#confirm-yes");
      await page.waitForSelector(`[data-merchant='${travel.merchant_id}'][data-consent='revoked']`);

      // Erase at the shop: what it means is said before anything happens.
      const erase = `#erase-actions [data-action='erase'][data-merchant='${shop.merchant_id}']`;
      expect(await page.locator("#erase-actions [data-action='erase']").count(), "only where a consent stands").toBe(1);
      await page.click(erase);
      await page.waitForSelector("#confirm[open]");
      expect(await page.textContent("#confirm-title")).toBe("Erase yourself at Corner Shop?");
      const confirmBody = ((await page.textContent("#confirm-body")) ?? "").trim();
      expect(confirmBody).toMatch(
        /^Erasing cannot be undone\.[\s\S]*permission you gave agents there is revoked[\s\S]*face data and documents are deleted[\s\S]*Receipts stay[\s\S]*told that you were erased[\s\S]*prove it is you once more/,
      );
      expect(confirmBody.match(/cannot be undone/g), "said once, first").toHaveLength(1);
      expect(await page.textContent("#confirm-yes")).toBe("Prove it is me and erase");
      await photograph(page, "me/en-erase-confirm");
      expect(await accessibilityViolations(page)).toEqual([]);

      // Confirmed by a fresh presence proof: the screen opens again, in this tab when the browser blocks
      // the window (D-611); back on the page, what was confirmed is erased with that proof.
      await page.evaluate(() => {
        window.open = () => null;
      });
      await page.click("#confirm-yes");
      await waitForView(page, "intro");
      await page.click("#continue");
      await waitForView(page, "capture");
      await startReading(page);
      await waitForView(page, "outcome", 90_000);
      const proof = await outcomeOf(page);
      expect(proof, JSON.stringify(proof)).toMatchObject({ kind: "approved" });
      await page.goBack();
      await waitForPage(page, "signed-out");
      expect(await page.textContent("#sign-in-status")).toBe("You have been erased everywhere.");
      await photograph(page, "me/en-erased");
      expect(await accessibilityViolations(page)).toEqual([]);

      // The shop's next calls see it: the agent is refused, the face is nobody's.
      const next = await consume(shop.keys.sk_test, { mandate_id: shopping.mandate_id, scope: "purchase", amount: 1, currency: "USD" });
      expect(next.body).toMatchObject({ allowed: false, reason: "mandate_revoked" });
      expect(await identifies(shop, atShop)).toBe(false);
      // The shop hears that the person erased themselves (with its own pseudonym) and its mandate's end; the travel desk
      // hears its withdrawal only, nothing of the shop.
      await heardOf(shopReceiver, "identity.erased");
      await heardOf(travelReceiver, "consent.withdrawn");
      expect(heard(shopReceiver).filter((e) => e.type === "identity.erased")).toEqual([
        expect.objectContaining({ data: { subject_ref: atShop.subject_ref, erased_at: expect.any(String) } }),
      ]);
      expect(heard(shopReceiver).filter((e) => e.type === "mandate.revoked")).toEqual([
        expect.objectContaining({ data: expect.objectContaining({ mandate_id: shopping.mandate_id, revoked_by: "granting_human" }) }),
      ]);
      expect(heard(travelReceiver).map((e) => e.type)).not.toContain("identity.erased");
      // Nothing identifying the person at the shop, table by table; no consent stood elsewhere, so the identity is gone too.
      expect(await identifyingRows(identityId, shop.merchant_id)).toEqual(NOTHING_IDENTIFYING);
      await page.context().close();
    },
    TIMEOUT,
  );
});
