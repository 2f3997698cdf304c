/**
 * Agent verification cards in a real browser, on Chromium's fake camera and microphone playing the
 * bona fide reading: an owner mints a card, the person opens its url on the hosted screen (card
 * mode: who asks, the purpose, what proving presence does), proves presence, and the owner polls
 * the card to `verified`; a capture lit by another session's colours is `refused`; an expired card and a card
 * opened twice say so on the screen. The person in the media is enrolled with the merchant first,
 * through the same screen, since a card is verified by a person the merchant knows.
 */
import { afterAll, beforeAll, describe, expect, inject, it } from "vitest";
import { requestVerification } from "../../shared/agents/verifications";
import { addOwner } from "../../shared/merchants/accounts";
import { merchantFactory, testDb } from "../harness/factories";
import { enrollStranger } from "../harness/identity";
import { serviceUnderTest } from "../harness/service";
import { createSession } from "../harness/sessions";
import { cardResult, requestCard } from "../harness/verifications";
import { type GuardedBrowser, openBrowser } from "./chromium";
import { outcomeOf, PHONE, photograph, readingFigures, screenUrl, sentCapture, startReading, waitForView } from "./hosted-screen";
import { litCamera } from "./lit-camera";

const ACCEPTED_SECONDS = 15;
const REFUSED_SECONDS = 5;
const TEST_TIMEOUT = 150_000;

const media = inject("media");
let browser: GuardedBrowser;
let merchant: Awaited<ReturnType<typeof merchantFactory>>;
let owner: Awaited<ReturnType<typeof enrollStranger>>;

beforeAll(async () => {
  browser = await openBrowser(serviceUnderTest().baseUrl, { media: media.reading, viewport: PHONE });
  merchant = await merchantFactory("Acme Travel");
  owner = await enrollStranger(merchant.keys.pk_test);
  await addOwner(testDb(), merchant.merchant_id, owner.subject_ref, new Date());
});

afterAll(async () => {
  await browser?.close();
});

/**
 * Opens `url` on the screen in `locale`, in front of the lit camera (relighting the face with the
 * session's own sequence, or `reflect`'s), and waits for its introduction.
 */
async function openCard(url: string, locale = "en-GB", seconds?: number, reflect?: string) {
  const page = await browser.newPage({ locale, viewport: PHONE });
  await litCamera(page, media.light, { reflect });
  await page.goto(screenUrl(url, seconds));
  await waitForView(page, "intro");
  return page;
}

/**
 * From the introduction: the camera, the gates, a reading, the outcome; with the engine's figures
 * of what the screen sent, for the message of an outcome the test did not expect.
 */
async function proveOn(page: Awaited<ReturnType<typeof openCard>>, seconds: number) {
  const sent = sentCapture(page);
  await page.click("#continue");
  await waitForView(page, "capture");
  await startReading(page);
  await waitForView(page, "outcome", (seconds + 40) * 1000);
  return { ...(await outcomeOf(page)), figures: readingFigures((await sent).face_template) };
}

async function mint(body: Record<string, unknown> = {}) {
  const res = await requestCard(owner.session_token, {
    merchant_id: merchant.merchant_id,
    purpose: "Confirm the booking for two",
    ...body,
  });
  expect(res.status, res.text).toBe(200);
  return res.body as { verification_id: string; url: string };
}

const stateOf = async (card: { verification_id: string }, now?: Date) =>
  (await cardResult(owner.session_token, card.verification_id, { now })).body;

describe("agent verification cards on the hosted screen", () => {
  it(
    "request, open, prove presence, poll to verified (the person in the camera enrolled through the screen first)",
    async () => {
      const enrolment = await createSession(merchant.keys.sk_test, { action: "enroll" });
      expect(enrolment.status, enrolment.text).toBe(201);
      const enrollPage = await openCard(enrolment.body.url, "en-GB", ACCEPTED_SECONDS);
      await enrollPage.check("#consent");
      const enrolled = await proveOn(enrollPage, ACCEPTED_SECONDS);
      expect(enrolled, enrolled.figures).toMatchObject({ kind: "approved" });
      await enrollPage.context().close();

      const card = await mint();
      expect((await stateOf(card)).state).toBe("pending");
      const page = await openCard(card.url, "en-GB", ACCEPTED_SECONDS);
      expect(await page.textContent("#intro-title")).toBe("Prove you are here for Acme Travel");
      const intro = await page.textContent("main");
      expect(intro).toContain("Confirm the booking for two");
      expect(intro).toContain("It authorises nothing");
      expect(page.url(), "the token leaves the address bar").not.toContain("hst_");
      await photograph(page, "en-card-intro");
      expect((await stateOf(card)).state).toBe("opened");
      const outcome = await proveOn(page, ACCEPTED_SECONDS);
      expect(outcome, outcome.figures).toMatchObject({
        kind: "approved",
        message: "Your presence is verified. You can close this page.",
      });
      await photograph(page, "en-card-verified");
      await page.context().close();
      const verified = await stateOf(card);
      expect(verified).toMatchObject({ state: "verified", reason: "verified", assurance_level: "face_voice" });
      expect(verified.receipt_code).toBe(outcome.receipt);
    },
    2 * TEST_TIMEOUT,
  );

  it(
    "an agent's card names the agent as unverified (pt-BR); a capture lit by another session's colours is refused with the engine's reason",
    async () => {
      const agent = {
        kind: "agent" as const,
        merchantId: merchant.merchant_id,
        environment: "test" as const,
        clientId: "client-travel-agent",
        ownerIdentityId: (
          await testDb()`select identity_id from private.merchant_owners where merchant_id = ${merchant.merchant_id}::uuid`
        )[0].identity_id as string,
        scopes: ["mandates:read"],
      };
      const deps = { sql: testDb(), now: new Date(), locale: "en" as const };
      const context = { serviceBaseUrl: serviceUnderTest().baseUrl, agentName: "Travel helper" };
      const card = await requestVerification(deps, agent, { purpose: "Confirmar a reserva", ttl_seconds: 300 }, context);
      const page = await openCard(card.url, "pt-BR", REFUSED_SECONDS, "n_another_capture_0001");
      expect(await page.textContent("#intro-title")).toBe("Travel helper pede que você comprove que está aqui");
      const intro = await page.textContent("main");
      expect(intro).toContain("não verificado");
      expect(intro).toContain("Confirmar a reserva");
      await photograph(page, "pt-BR-card-intro");
      const outcome = await proveOn(page, REFUSED_SECONDS);
      expect(outcome, outcome.figures).toMatchObject({ kind: "refused", reason: "light_not_followed" });
      await page.context().close();
      expect(await stateOf(card)).toMatchObject({ state: "refused", reason: outcome.reason });
    },
    TEST_TIMEOUT,
  );

  it("expired: the screen says so and the card reads expired; opened twice: the second screen says it was opened", async () => {
    const stale = await mint({ ttl_seconds: 60 });
    const later = new Date(Date.now() + 61_000);
    const page = await browser.newPage({ locale: "en-GB", viewport: PHONE });
    await page.context().setExtraHTTPHeaders({ "x-test-now": later.toISOString() });
    await page.goto(stale.url);
    await waitForView(page, "error");
    expect(await page.textContent("#error-message")).toContain("expired");
    await page.context().close();
    expect((await stateOf(stale, later)).state).toBe("expired");

    const card = await mint();
    const first = await openCard(card.url);
    const second = await browser.newPage({ locale: "en-GB", viewport: PHONE });
    await second.goto(card.url);
    await waitForView(second, "error");
    expect(await second.textContent("#error-message")).toBe("This link has already been opened. Ask for a new one.");
    await second.context().close();
    expect((await stateOf(card)).state).toBe("opened");
    await first.click('[data-view="intro"] [data-cancel]');
    await waitForView(first, "outcome");
    await first.context().close();
    expect(await stateOf(card)).toMatchObject({ state: "refused", reason: "person_cancelled" });
  });
});
