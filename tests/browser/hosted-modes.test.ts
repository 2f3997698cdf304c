/**
 * The resource API's hosted sessions in a real browser, each mode end to end: the merchant opens
 * it with `POST /v1/sessions` (a secret key), the person's browser opens its `url`, the screen
 * says what the mode asks (in the session's locale, with the session's branding), the person goes
 * through the capture on Chromium's fake camera lit by the screen (lit-camera.ts), the screen sends
 * them back to the merchant's `return_url` (`cancel_url` after a cancel) with `session_id` and
 * `status`, where a small HTTPS page on this machine receives them, and the merchant's
 * `GET /v1/sessions/{id}` shows the result. axe-core checks every state shown, in both schemes.
 *
 * The camera's face is enrolled by the claim session first; the other modes are for that person
 * (its facetoken), so the tests run in order; the money mandate, which the person cancels, is for
 * another person the merchant enrolled. Five accepted readings of 15 s (the length the
 * engine's v2 figures are measured at), one per mode and one for the step-up of the mandate
 * granted (face only: nothing read aloud, no microphone); the money mandate and the cancel need none.
 */
import { readFileSync } from "node:fs";
import { createServer, type Server } from "node:https";
import type { AddressInfo } from "node:net";
import type { Page } from "playwright-core";
import { afterAll, beforeAll, describe, expect, inject, it } from "vitest";
import { formatMinorUnits } from "../../client/screen/modes";
import { accentTokens } from "../../shared/lib/screen-theme";
import { merchantFactory } from "../harness/factories";
import { enrollStranger } from "../harness/identity";
import { useOwnService } from "../harness/own-service";
import { v1 } from "../harness/resource-api";
import { type GuardedBrowser, openBrowser } from "./chromium";
import {
  accessibilityViolations,
  outcomeOf,
  PHONE,
  photograph,
  readingFigures,
  screenUrl,
  sentCapture,
  startReading,
  waitForGates,
  waitForView,
} from "./hosted-screen";
import { litCamera } from "./lit-camera";

const FUNCTIONS = ["resource-api", "hosted-capture", "merchant-theme-get", "process-biovital-enrollment"];
const ACCEPTED_SECONDS = 15;
const TEST_TIMEOUT = 180_000;

const service = useOwnService("hosted_modes", FUNCTIONS);
const media = inject("media");
let browser: GuardedBrowser;
let merchant: Awaited<ReturnType<typeof merchantFactory>>;
let shop: MerchantPage;
/** The camera's face, as the merchant knows it once the claim session enrolled it. */
let facetoken: string;
/** The mandate the mandate session granted, which the step-up raises. */
let grantedMandate: string;

/** The merchant's page the person is sent back to: HTTPS on loopback under the tests' own CA (tests/fixtures/tls), which the person's browser is told to accept, recording each arrival. */
interface MerchantPage {
  origin: string;
  arrivals: URL[];
  close(): Promise<void>;
}

const tls = (name: string) => readFileSync(new URL(`../fixtures/tls/${name}`, import.meta.url), "utf8");

async function startMerchantPage(): Promise<MerchantPage> {
  const arrivals: URL[] = [];
  const server: Server = createServer({ key: tls("localhost.key"), cert: tls("localhost.pem") }, (request, response) => {
    const url = new URL(request.url ?? "/", "https://127.0.0.1");
    if (url.pathname !== "/favicon.ico") arrivals.push(url);
    response.writeHead(200, { "content-type": "text/html; charset=utf-8" });
    response.end('<!doctype html><html lang="en"><title>Acme Market</title><h1>Welcome back to Acme Market</h1></html>');
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const origin = `https://127.0.0.1:${(server.address() as AddressInfo).port}`;
  return {
    origin,
    arrivals,
    close() {
      server.closeAllConnections();
      return new Promise((resolve) => server.close(() => resolve()));
    },
  };
}

beforeAll(async () => {
  shop = await startMerchantPage();
  browser = await openBrowser(service.own.server.url, { media: media.reading, viewport: PHONE });
  merchant = await merchantFactory("Acme Market");
});

afterAll(async () => {
  await browser?.close();
  await shop?.close();
});

/** `POST /v1/sessions` with the merchant's secret key: the 201 session with its url. */
async function openV1Session(body: Record<string, unknown>) {
  const res = await v1("/sessions", {
    key: merchant.keys.sk_test,
    body: { return_url: `${shop.origin}/back`, cancel_url: `${shop.origin}/cancelled`, ...body },
  });
  expect(res.status, res.text).toBe(201);
  return res.body as { id: string; url: string; mode: string };
}

/** The merchant's `GET /v1/sessions/{id}`. */
async function readV1Session(id: string) {
  const res = await v1(`/sessions/${id}`, { key: merchant.keys.sk_test });
  expect(res.status, res.text).toBe(200);
  return res.body as { status: string; result: Record<string, any> | null; ended_at: string | null };
}

/** A page of its own for the person (its browser's locale), allowed to reach the merchant's page. */
function personPage(locale: string) {
  return browser.newPage({ locale, viewport: PHONE, allow: [shop.origin], ignoreHTTPSErrors: true });
}

/** What the screen shows on the intro: the heading, the lead, the terms as label → value. */
async function introOf(page: Page) {
  return page.evaluate(() => {
    const terms: Record<string, string> = {};
    const items = [...document.querySelectorAll("#intro-terms > *")];
    for (let i = 0; i + 1 < items.length; i += 2) terms[items[i]!.textContent!] = items[i + 1]!.textContent!.replace(/\s/g, " ");
    return {
      lang: document.documentElement.lang,
      title: document.getElementById("intro-title")!.textContent,
      lead: document.getElementById("intro-lead")!.textContent,
      terms,
      continueLabel: document.getElementById("continue")!.textContent,
    };
  });
}

/** Waits until the browser is on the merchant's page at `path`, and answers the query it arrived with. */
async function arrivedAt(page: Page, path: string, timeout = 30_000) {
  await page.waitForURL((url) => url.origin === shop.origin && url.pathname === path, { timeout });
  const arrived = new URL(page.url());
  expect(
    shop.arrivals.map((url) => url.href),
    "the merchant's server saw the person arrive",
  ).toContain(new URL(arrived.pathname + arrived.search, "https://127.0.0.1").href);
  return Object.fromEntries(arrived.searchParams);
}

/** Through the capture from the intro: Continue (the consent ticked when asked), the gates, an accepted reading, the outcome. */
async function capture(page: Page) {
  const sent = sentCapture(page);
  if (await page.isVisible("#consent")) await page.check("#consent");
  await page.click("#continue");
  await waitForView(page, "capture");
  await startReading(page);
  await waitForView(page, "outcome", (ACCEPTED_SECONDS + 40) * 1000);
  return { outcome: await outcomeOf(page), sent: await sent };
}

describe("a /v1 hosted session, from POST /v1/sessions through the screen back to the merchant", () => {
  it(
    "claim, in the session's locale (pt-BR on an English browser) with its branding: consent, capture, enrolled; the person lands on return_url with session_id and status; the merchant reads the facetoken",
    async () => {
      const session = await openV1Session({
        mode: "claim",
        locale: "pt-BR",
        metadata: { signup: "A-1042" },
        branding: {
          logo_url: "https://cdn.acme.example/logo.png",
          accent: "#0a7d4f",
          headline: "Cadastro seguro da Acme",
          footer_note: "Acme Market Ltda. · CNPJ 12.345.678/0001-90",
        },
      });
      expect(new URL(session.url).pathname).toBe("/functions/v1/hosted-capture/session");
      const page = await personPage("en-GB");
      await litCamera(page, media.light);
      await page.goto(screenUrl(session.url, ACCEPTED_SECONDS));
      await waitForView(page, "intro");
      expect(await introOf(page)).toMatchObject({
        lang: "pt-BR",
        title: "Cadastre-se em Acme Market",
        continueLabel: "Usar câmera e microfone",
      });
      expect(await page.textContent("#consent-label")).toContain("Acme Market");
      expect(await page.textContent("#brand-headline")).toBe("Cadastro seguro da Acme");
      expect(await page.textContent("#footer-note")).toBe("Acme Market Ltda. · CNPJ 12.345.678/0001-90");
      // A logo on another host is not loaded (the screen loads nothing from another host): the theme's, which the service serves, stays.
      expect(await page.getAttribute("#logo", "src")).not.toContain("cdn.acme.example");
      const primary = await page.evaluate(() => document.documentElement.style.getPropertyValue("--primary"));
      expect(primary, "the accent is the primary colour").toBe(accentTokens("#0a7d4f").color_primary);
      expect(await accessibilityViolations(page)).toEqual([]);
      await photograph(page, "v1-claim-intro");

      const { outcome, sent } = await capture(page);
      expect(outcome, readingFigures(sent.face_template)).toMatchObject({
        kind: "approved",
        title: "Confirmado",
        message: "Seu cadastro foi concluído.",
      });
      expect(await page.textContent("#return-link")).toBe("Voltar para Acme Market");
      expect(await accessibilityViolations(page)).toEqual([]);
      await photograph(page, "v1-claim-outcome");
      // Nothing pressed: the screen takes the person back by itself.
      expect(await arrivedAt(page, "/back")).toEqual({ session_id: session.id, status: "completed" });
      await page.context().close();

      const read = await readV1Session(session.id);
      expect(read).toMatchObject({ status: "completed", result: { approved: true, reason: null } });
      facetoken = read.result!.facetoken;
      expect(facetoken).toEqual(expect.stringMatching(/^sub_/));
    },
    TEST_TIMEOUT,
  );

  it(
    "recognise (es): the person the session is for is recognised; 'Volver a' takes them back at once",
    async () => {
      expect(facetoken, "the claim session enrolled the camera's face").toBeDefined();
      const session = await openV1Session({ mode: "recognise", facetoken, locale: "es-MX" });
      const page = await personPage("es-ES");
      await litCamera(page, media.light);
      await page.goto(screenUrl(session.url, ACCEPTED_SECONDS));
      await waitForView(page, "intro");
      expect(await introOf(page)).toMatchObject({ lang: "es", title: "Confirma que eres tú para Acme Market", terms: {} });
      expect(await accessibilityViolations(page)).toEqual([]);
      await photograph(page, "v1-recognise-intro");
      const { outcome, sent } = await capture(page);
      expect(outcome, readingFigures(sent.face_template)).toMatchObject({ kind: "approved", title: "Confirmado", receipt: null });
      await page.click("#return-link");
      expect(await arrivedAt(page, "/back")).toEqual({ session_id: session.id, status: "completed" });
      await page.context().close();
      expect(await readV1Session(session.id)).toMatchObject({ status: "completed", result: { approved: true, reason: null, facetoken } });
    },
    TEST_TIMEOUT,
  );

  it(
    "attribute (en): asks its question in words; the merchant learns the answer (no document on record: false) with the act's receipt; the person may stay, then go back",
    async () => {
      const session = await openV1Session({ mode: "attribute", facetoken, attribute: "document_verified" });
      const page = await personPage("en-GB");
      await litCamera(page, media.light);
      await page.goto(screenUrl(session.url, ACCEPTED_SECONDS));
      await waitForView(page, "intro");
      expect(await introOf(page)).toMatchObject({
        lang: "en",
        title: "Answer one question for Acme Market",
        terms: { Question: "Is a valid, verified identity document on record for you?" },
      });
      expect(await accessibilityViolations(page)).toEqual([]);
      await photograph(page, "v1-attribute-intro");
      const { outcome, sent } = await capture(page);
      expect(outcome, readingFigures(sent.face_template)).toMatchObject({
        kind: "approved",
        title: "Confirmed",
        message: "It was you, and the question has been answered.",
      });
      expect(outcome.receipt).toMatch(/^RCPT-/);
      await page.click("#return-stay");
      // Longer than the page's own wait before it sends the person back (RETURN_SECONDS, 5 s): a timer in the page, not the service's clock.
      await page.waitForTimeout(6000);
      expect(new URL(page.url()).origin, "staying keeps the person on the screen").toBe(new URL(service.own.server.url).origin);
      expect(await page.evaluate(() => document.activeElement?.id)).toBe("return-link");
      expect(await accessibilityViolations(page)).toEqual([]);
      await photograph(page, "v1-attribute-outcome");
      await page.keyboard.press("Enter");
      expect(await arrivedAt(page, "/back")).toEqual({ session_id: session.id, status: "completed" });
      await page.context().close();
      const read = await readV1Session(session.id);
      expect(read).toMatchObject({
        status: "completed",
        result: { approved: true, reason: null, facetoken, attribute: "document_verified", value: false, receipt_code: outcome.receipt },
      });
    },
    TEST_TIMEOUT,
  );

  it(
    "mandate (en): the terms in plain words (agent, scopes, ceiling, until); the capture grants it; the merchant reads the mandate",
    async () => {
      const until = new Date(Date.now() + 30 * 86_400_000).toISOString();
      const session = await openV1Session({
        mode: "mandate",
        facetoken,
        mandate: {
          granted_to: "agent_travel_7",
          agent_display_name: "Travel helper",
          scope: ["booking", "message"],
          ceiling: { count: 3, period: "week" },
          until,
        },
      });
      const page = await personPage("en-GB");
      await litCamera(page, media.light);
      await page.goto(screenUrl(session.url, ACCEPTED_SECONDS));
      await waitForView(page, "intro");
      const untilWords = await page.evaluate(
        (iso) => new Intl.DateTimeFormat("en", { dateStyle: "long", timeStyle: "short" }).format(new Date(iso)).replace(/\s/g, " "),
        until,
      );
      expect(await introOf(page)).toMatchObject({
        title: "Allow Travel helper to act for you",
        lead: "Acme Market asks you to let Travel helper act for you, only within the terms below. Confirm that it is you to grant this permission.",
        terms: { Agent: "Travel helper", "It may": "Make bookings and Send messages", Limit: "3 actions per week", Until: untilWords },
      });
      expect(await accessibilityViolations(page)).toEqual([]);
      await photograph(page, "v1-mandate-intro");
      const { outcome, sent } = await capture(page);
      expect(outcome, readingFigures(sent.face_template)).toMatchObject({
        kind: "approved",
        title: "Confirmed",
        message: "Permission granted.",
      });
      await photograph(page, "v1-mandate-outcome");
      await page.click("#return-link");
      expect(await arrivedAt(page, "/back")).toEqual({ session_id: session.id, status: "completed" });
      await page.context().close();
      const read = await readV1Session(session.id);
      expect(read).toMatchObject({ status: "completed", result: { approved: true, reason: null, facetoken } });
      const mandate = await v1(`/mandates/${read.result!.mandate_id}`, { key: merchant.keys.sk_test });
      expect(mandate.status, mandate.text).toBe(200);
      expect(mandate.body).toMatchObject({ granted_to: "agent_travel_7", scope: ["booking", "message"], status: "active" });
      grantedMandate = read.result!.mandate_id;
    },
    TEST_TIMEOUT,
  );

  it(
    "mandate step-up (en, D-428): the face only under the screen's light; the words say nothing is read aloud, no microphone is asked; the step-up is granted at level face",
    async () => {
      expect(grantedMandate, "the mandate session granted one").toBeDefined();
      const session = await openV1Session({
        mode: "mandate",
        facetoken,
        mandate: {
          granted_to: "agent_travel_7",
          agent_display_name: "Travel helper",
          scope: ["booking", "message"],
          ceiling: { count: 10, period: "week" },
          until: new Date(Date.now() + 30 * 86_400_000).toISOString(),
          step_up_of: grantedMandate,
        },
      });
      const page = await personPage("en-GB");
      await litCamera(page, media.light);
      // What the page asks the browser for (after the lit camera's own wrapper, so this one sees the page's call).
      await page.addInitScript(() => {
        const devices = navigator.mediaDevices;
        const original = devices.getUserMedia.bind(devices);
        const asked: MediaStreamConstraints[] = [];
        (globalThis as { askedMedia?: MediaStreamConstraints[] }).askedMedia = asked;
        devices.getUserMedia = (constraints) => {
          if (constraints) asked.push(constraints);
          return original(constraints);
        };
      });
      await page.goto(screenUrl(session.url, ACCEPTED_SECONDS));
      await waitForView(page, "intro");
      expect(await introOf(page)).toMatchObject({
        title: "Allow Travel helper to act for you",
        terms: { Agent: "Travel helper", Limit: "10 actions per week", Note: "This extends a permission you gave before." },
        continueLabel: "Use the camera",
      });
      expect(await page.textContent("#why-title")).toBe("Why the camera");
      expect(await page.textContent("#why-body")).toContain("you do not need to read or say anything");
      expect(await page.textContent("#why-body")).toContain("The microphone is not used");
      expect(await page.isVisible("#paced"), "no paced reading to offer").toBe(false);
      expect(await accessibilityViolations(page)).toEqual([]);
      await photograph(page, "v1-mandate-step-up-intro");

      const sent = sentCapture(page);
      await page.click("#continue");
      await waitForView(page, "capture");
      await waitForGates(page);
      expect(await page.textContent("#record")).toBe("Start");
      expect(await page.textContent("#guidance")).toBe("Ready. Press Start, then look at the screen without speaking.");
      await page.click("#record");
      await page.waitForFunction(() => !document.getElementById("recording")!.hidden);
      expect(await page.textContent("#capture-title")).toBe("Look at the screen");
      expect(await page.textContent("#reading")).toBe(
        "Keep your face close to the screen and still while it changes colour. There is nothing to read or say.",
      );
      expect(await page.locator("#reading .line").count(), "no lines to read").toBe(0);
      await photograph(page, "v1-mandate-step-up-recording");
      await waitForView(page, "outcome", (ACCEPTED_SECONDS + 40) * 1000);
      const outcome = await outcomeOf(page);
      const { face_template } = await sent;
      expect(outcome, readingFigures(face_template)).toMatchObject({
        kind: "approved",
        title: "Confirmed",
        message: "Permission granted.",
      });
      expect(await page.evaluate(() => (globalThis as { askedMedia?: MediaStreamConstraints[] }).askedMedia)).toEqual([
        expect.objectContaining({ audio: false, video: expect.anything() }),
      ]);
      // Nothing was heard: the descriptor's voice is silent throughout, and the light challenge is in it.
      expect(face_template.signals.voice.every((level) => level === 0)).toBe(true);
      expect(face_template.signals.light).toBeDefined();
      await page.click("#return-link");
      expect(await arrivedAt(page, "/back")).toEqual({ session_id: session.id, status: "completed" });
      await page.context().close();
      const read = await readV1Session(session.id);
      expect(read).toMatchObject({ status: "completed", result: { approved: true, reason: null, facetoken } });
      const mandate = await v1(`/mandates/${read.result!.mandate_id}`, { key: merchant.keys.sk_test });
      expect(mandate.status, mandate.text).toBe(200);
      expect(mandate.body).toMatchObject({ status: "active", assurance_level: "face", ceiling: { count: 10, period: "week" } });
    },
    TEST_TIMEOUT,
  );

  it("mandate with a money ceiling (pt-BR): the ceiling in the locale's money; the person cancels and lands on cancel_url", async () => {
    // No capture here, so the person need not be the camera's: one the merchant enrolled by the function API.
    const person = await enrollStranger(merchant.keys.pk_test);
    const session = await openV1Session({
      mode: "mandate",
      facetoken: person.subject_ref,
      locale: "pt-BR",
      mandate: {
        granted_to: "agent_shopper_2",
        scope: ["purchase"],
        constraints: { country_allowlist: ["BR"] },
        ceiling: { amount: 150_000, currency: "BRL", period: "month" },
        until: new Date(Date.now() + 7 * 86_400_000).toISOString(),
      },
    });
    const page = await personPage("en-GB");
    await page.goto(session.url);
    await waitForView(page, "intro");
    const intro = await introOf(page);
    expect(intro).toMatchObject({
      lang: "pt-BR",
      title: "Permita que agent_shopper_2 aja por você",
      terms: { Agente: "agent_shopper_2", Pode: "Fazer compras", "Só em países": "BR" },
    });
    expect(intro.terms.Limite).toBe(`${formatMinorUnits(150_000, "BRL", "pt-BR")} por mês`.replace(/\s/g, " "));
    expect(intro.terms.Limite).toBe("R$ 1.500,00 por mês");
    expect(await accessibilityViolations(page)).toEqual([]);
    await photograph(page, "v1-mandate-money-intro");
    await page.click('[data-view="intro"] [data-cancel]');
    await waitForView(page, "outcome");
    expect(await outcomeOf(page)).toMatchObject({ kind: "cancelled", title: "Cancelado" });
    expect(await accessibilityViolations(page)).toEqual([]);
    await photograph(page, "v1-cancelled");
    expect(await arrivedAt(page, "/cancelled")).toEqual({ session_id: session.id, status: "cancelled" });
    await page.context().close();
    expect(await readV1Session(session.id)).toMatchObject({ status: "cancelled", result: { approved: false, reason: "person_cancelled" } });
  });
});
