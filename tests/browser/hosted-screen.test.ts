/**
 * The hosted screen in a real browser, from hosted-session-create to the outcome the merchant reads
 * and receives by webhook, on Chromium's fake camera and microphone playing the bona fide reading
 * (scripts/media/generate.ts), the face relit by the screen's light challenge (lit-camera.ts). One
 * browser for the file; each locale gets a context of its own.
 *
 * Captures are few and short, because each costs its length plus the page getting ready: one 15 s
 * reading per locale that must be accepted (the length the engine's v2 figures are measured at:
 * docs/benchmarks.md), one 15 s reading lit by another nonce's sequence (a capture made for another session:
 * refused by the light check), one 5 s reading per other locale lit the same way, and one 5 s
 * paced reading for a payment (refused: a real refusal, not a forced one). Every other
 * state (the theme, cancel, a token used twice, an expired session, a face the screen's light does
 * not reach) needs no recording.
 */
import { afterAll, beforeAll, describe, expect, inject, it } from "vitest";
import { pacedCues } from "../../client/screen/paced";
import { evaluatePresence } from "../../shared/engine";
import { rpc } from "../../shared/kernel/db/rpc";
import { translate } from "../../shared/kernel/i18n";
import { userMessage } from "../../shared/sessions/outcomes";
import { defaultTheme } from "../../shared/themes/theme";
import { merchantFactory, testDb } from "../harness/factories";
import { useOwnService } from "../harness/own-service";
import { authorizeBody, createSession, readSession } from "../harness/sessions";
import { expectSignedBy } from "../harness/webhook-receiver";
import { type GuardedBrowser, openBrowser } from "./chromium";
import {
  emulateScheme,
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

/** The screen, what the merchant calls, the outbox, and the default theme's logo and fonts (merchant-theme-get). */
const FUNCTIONS = ["hosted-session-create", "hosted-session-get", "hosted-capture", "merchant-theme-get", "session-expiry-and-webhooks"];
const ACCEPTED_SECONDS = 15;
const REFUSED_SECONDS = 5;
const TEST_TIMEOUT = 150_000;

const service = useOwnService("hosted_screen", FUNCTIONS);
const media = inject("media");
let browser: GuardedBrowser;
let merchant: Awaited<ReturnType<typeof merchantFactory>>;

beforeAll(async () => {
  browser = await openBrowser(service.own.server.url, { media: media.reading, viewport: PHONE });
  merchant = await merchantFactory("Acme Market");
});

afterAll(async () => {
  await browser?.close();
});

async function open(body: Record<string, unknown>, key = merchant.keys.sk_test) {
  const res = await createSession(key, body);
  expect(res.status, res.text).toBe(201);
  return res.body as { session_id: string; url: string; session_token: string };
}

/** The screen's words in each locale, as the tests check them. */
const WORDS = {
  "en-GB": { accepted: "Confirmed", refused: "Not confirmed", cancelled: "Cancelled", lang: "en" },
  "pt-BR": { accepted: "Confirmado", refused: "Não confirmado", cancelled: "Cancelado", lang: "pt-BR" },
  "es-ES": { accepted: "Confirmado", refused: "No confirmado", cancelled: "Cancelado", lang: "es" },
} as const;
type TestLocale = keyof typeof WORDS;

/**
 * One session through the screen in `locale`: intro (the consent ticked when asked), gates, a
 * reading of `seconds`, the outcome. `shots` names the states to photograph (`<lang>-<state>`, the
 * outcome's state named `outcomeShot` if given); `reflect` lights the face with another nonce's
 * sequence than the session's.
 */
async function throughScreen(
  locale: TestLocale,
  body: Record<string, unknown>,
  seconds: number,
  shots: string[] = [],
  options: { paced?: boolean; reflect?: string; outcomeShot?: string } = {},
) {
  const session = await open(body);
  const page = await browser.newPage({ locale, viewport: PHONE });
  const camera = await litCamera(page, media.light, { reflect: options.reflect });
  const completion = sentCapture(page);
  const lang = WORDS[locale].lang;
  try {
    await page.goto(screenUrl(session.url, seconds));
    await waitForView(page, "intro");
    expect(await page.getAttribute("html", "lang")).toBe(lang);
    if (shots.includes("intro")) await photograph(page, `${lang}-intro`);
    if (await page.isVisible("#consent")) await page.check("#consent");
    if (options.paced) await page.check("#paced");
    await page.click("#continue");
    await waitForView(page, "capture");
    await startReading(page);
    if (options.paced) {
      // The cues of the nonce's schedule: an opening pause (breathe in) of 0.5 to 3 s, then the first words to read.
      await page.waitForFunction(() => document.querySelector<HTMLElement>("#reading .cue")?.dataset.kind === "speak", null, {
        timeout: (seconds + 5) * 1000,
      });
      const reading = translate(lang, "screen.reading.lines").replaceAll("|", " ");
      const first = pacedCues(camera.sessionNonce()!, seconds, reading.split(/\s+/)).find((cue) => cue.kind === "speak");
      expect(await page.textContent("#reading .cue")).toBe(first!.text);
      expect(first!.text).toMatch(/^I am here/);
      await photograph(page, `${lang}-paced`);
    }
    if (shots.includes("recording")) {
      await page.waitForTimeout(1500);
      await photograph(page, `${lang}-recording`);
    }
    await waitForView(page, "outcome", (seconds + 40) * 1000);
    const outcome = await outcomeOf(page);
    if (shots.includes("outcome")) {
      await photograph(page, `${lang}-${options.outcomeShot ?? (outcome.kind === "approved" ? "accepted" : outcome.kind)}`);
    }
    return { session, outcome, sent: await completion };
  } finally {
    await page.context().close();
  }
}

describe("the hosted screen, from hosted-session-create to the merchant", () => {
  it(
    "en: enrols a person from the session's URL (intro, consent, gates, reading, accepted); the merchant reads it and gets the webhook",
    async () => {
      const receiver = await service.receiver();
      const { secret } = await service.endpointFor(merchant.merchant_id, receiver.url);
      const session = await open({ action: "enroll", metadata: { flow: "screen" } });
      const page = await browser.newPage({ locale: "en-GB", viewport: PHONE });
      const camera = await litCamera(page, media.light);
      const completion = sentCapture(page);
      const started = Date.now();
      await page.goto(screenUrl(session.url, ACCEPTED_SECONDS));
      await waitForView(page, "intro");
      const introMs = Date.now() - started;
      expect(await page.textContent("#intro-title")).toBe("Enrol with Acme Market");
      expect(page.url(), "the token leaves the address bar").not.toContain(session.session_token);
      await photograph(page, "en-intro");

      // Keyboard only: Continue without the consent is refused and the focus goes to the box.
      await page.focus("#continue");
      await page.keyboard.press("Enter");
      expect(await page.isVisible("#consent-error"), "the consent is asked first").toBe(true);
      expect(await page.evaluate(() => document.activeElement?.id)).toBe("consent");
      await page.keyboard.press("Space");
      await page.focus("#continue");
      await page.keyboard.press("Enter");
      await waitForView(page, "capture");
      await waitForGates(page);
      // What getting ready cost (docs/benchmarks.md): the first page of this browser, so every byte is this screen's.
      console.log(JSON.stringify({ screen: "hosted", intro_ms: introMs, ready_ms: Date.now() - started, ready_bytes: browser.bytes() }));
      await photograph(page, "en-ready");
      await startReading(page);
      await page.waitForTimeout(1500);
      await photograph(page, "en-recording");
      expect(await page.getAttribute("body", "data-light"), "the screen lights the face while the person reads").toBe("sequence");
      await waitForView(page, "outcome", (ACCEPTED_SECONDS + 40) * 1000);
      expect(await page.getAttribute("body", "data-light"), "and gives the screen back afterwards").toBeNull();
      const sent = await completion;
      expect(sent.face_template, "a descriptor v2 for the session's nonce").toMatchObject({
        version: 2,
        capture_nonce: camera.sessionNonce(),
        signals: { light: { sequence: "light-v1" } },
      });
      expect(sent.face_template.signals.light?.skin).toHaveLength(ACCEPTED_SECONDS * sent.face_template.signals.sample_rate_hz);
      const outcome = await outcomeOf(page);
      expect(outcome, readingFigures(sent.face_template)).toMatchObject({
        kind: "approved",
        title: "Confirmed",
        message: "You are enrolled. You can close this page.",
      });
      expect(await page.evaluate(() => document.activeElement?.id), "the outcome's heading has the focus").toBe("outcome-title");
      await photograph(page, "en-accepted");
      await page.context().close();

      const read = await readSession(merchant.keys.sk_test, session.session_id);
      expect(read.body).toMatchObject({ state: "completed", result: { approved: true, reason: null } });
      expect(read.body.result.subject_ref).toEqual(expect.any(String));

      await service.own.tick("session-expiry-and-webhooks", new Date());
      await receiver.waitFor(1);
      const request = receiver.received.find((r) => r.envelope.data.id === session.session_id);
      expect(request, "the session.completed webhook").toBeDefined();
      await expectSignedBy(request!, [secret], new Date());
      expect(request!.envelope).toMatchObject({
        type: "session.completed",
        data: { id: session.session_id, state: "completed", metadata: { flow: "screen" } },
      });
    },
    TEST_TIMEOUT,
  );

  it(
    "en: a short paced reading (the cues shown, the schedule declared in the descriptor) is refused, and the screen says why in words",
    async () => {
      const { session, outcome, sent } = await throughScreen("en-GB", authorizeBody(), REFUSED_SECONDS, ["outcome"], { paced: true });
      expect(sent.face_template.signals.schedule).toBe("nonce-v1");
      expect(outcome.kind).toBe("refused");
      expect(outcome.title).toBe("Not confirmed");
      const read = await readSession(merchant.keys.sk_test, session.session_id);
      expect(read.body).toMatchObject({ state: "failed", result: { approved: false, reason: outcome.reason } });
      expect(outcome.message).toBe(userMessage("en", "authorize", read.body.result));
    },
    TEST_TIMEOUT,
  );

  it(
    "en: a face lit by another nonce's sequence (a capture made for another session, replayed in time) is refused: light_not_followed",
    async () => {
      const { session, outcome, sent } = await throughScreen("en-GB", { action: "login" }, ACCEPTED_SECONDS, ["outcome"], {
        reflect: "n_another_capture_0001",
        outcomeShot: "light-refused",
      });
      const judged = evaluatePresence(sent.face_template);
      expect(judged.liveness.checks.light, "the light check refuses it").toMatchObject({ passed: false });
      // The other sequence's reflection also stays in the skin colour the pulse is taken from, and may drown it first.
      expect(["light_not_followed", "no_pulse"]).toContain(outcome.reason);
      expect(outcome, JSON.stringify(outcome)).toMatchObject({ kind: "refused", reason: judged.reason, title: "Not confirmed" });
      const read = await readSession(merchant.keys.sk_test, session.session_id);
      expect(read.body).toMatchObject({ state: "failed", result: { approved: false, reason: judged.reason } });
      expect(outcome.message).toBe(userMessage("en", "login", read.body.result));
    },
    TEST_TIMEOUT,
  );

  for (const [locale, refused] of [
    ["pt-BR", { action: "sign" }],
    ["es-ES", authorizeBody()],
  ] as const) {
    it(
      `${locale}: the enrolled person signs in (accepted); a short capture lit by another session's colours is refused, every word in ${locale}`,
      async () => {
        const words = WORDS[locale];
        const login = await throughScreen(locale, { action: "login" }, ACCEPTED_SECONDS, ["intro", "recording", "outcome"]);
        expect(login.outcome, readingFigures(login.sent.face_template)).toMatchObject({ kind: "approved", title: words.accepted });
        expect(login.sent.face_template).toMatchObject({ version: 2, capture_nonce: login.sent.capture_nonce });
        expect(login.outcome.receipt).toMatch(/^RCPT-/);
        expect((await readSession(merchant.keys.sk_test, login.session.session_id)).body).toMatchObject({ state: "completed" });
        const short = await throughScreen(locale, refused, REFUSED_SECONDS, ["outcome"], { reflect: "n_another_capture_0002" });
        expect(short.outcome).toMatchObject({ kind: "refused", title: words.refused });
        expect(evaluatePresence(short.sent.face_template).liveness.checks.light, "refused by the light check").toMatchObject({
          passed: false,
        });
        expect((await readSession(merchant.keys.sk_test, short.session.session_id)).body).toMatchObject({ state: "failed" });
      },
      TEST_TIMEOUT,
    );
  }
});

describe("the hosted screen without a capture", () => {
  it("shows a merchant's published capture theme, in both schemes, and loads none of its assets from the merchant's host", async () => {
    const themed = await merchantFactory("Verde Grocer");
    const theme = {
      ...defaultTheme("capture", "https://unused.example"),
      brand_name: "Verde",
      mode: "light",
      logo_wide_url: "https://cdn.verde.example/logo-wide.png",
      logo_square_url: "https://cdn.verde.example/logo.png",
      logo_icon_url: "https://cdn.verde.example/icon.png",
      font_heading_url: "https://cdn.verde.example/fonts.css",
      font_body_url: "https://cdn.verde.example/fonts.css",
      color_primary: "152 60% 28%",
      color_primary_fg: "0 0% 100%",
      color_background: "40 33% 96%",
      color_foreground: "150 30% 12%",
      color_border: "40 15% 80%",
      radius_md_px: 4,
      font_heading_family: "Georgia, serif",
    };
    await rpc(testDb(), "theme_set", { merchant_id: themed.merchant_id, surface: "capture", theme });
    await rpc(testDb(), "theme_publish", { merchant_id: themed.merchant_id, surface: "capture" });
    const session = await open({ action: "login" }, themed.keys.sk_test);
    const page = await browser.newPage({ locale: "en-GB", viewport: PHONE });
    await page.goto(session.url);
    await waitForView(page, "intro");
    expect(await page.textContent("#brand-name")).toBe("Verde");
    const colourOf = (selector: string, property: string) =>
      page.evaluate(([s, p]) => getComputedStyle(document.querySelector(s)!).getPropertyValue(p), [selector, property]);
    const rgbOf = (hsl: string) =>
      page.evaluate((value) => {
        const probe = document.createElement("i");
        probe.style.color = `hsl(${value})`;
        document.body.append(probe);
        const rgb = getComputedStyle(probe).color;
        probe.remove();
        return rgb;
      }, hsl);
    expect(await colourOf("#continue", "background-color")).toBe(await rgbOf("152 60% 28%"));
    expect(await colourOf("body", "background-color")).toBe(await rgbOf("40 33% 96%"));
    expect(await colourOf("#continue", "border-radius")).toBe("4px");
    expect(await colourOf("h1", "font-family")).toBe("Georgia, serif");
    await photograph(page, "en-themed");
    await emulateScheme(page, "dark");
    expect(await colourOf("body", "background-color"), "the light theme mirrored for a dark device").toBe(await rgbOf("40 33% 4%"));
    await emulateScheme(page, "light");
    expect(await page.isHidden("#logo"), "the merchant's logo is on another host: not loaded").toBe(true);
    await page.context().close();
    expect(browser.foreign).toEqual([]);
  });

  it("cancels from the camera view: the screen says so, the session is cancelled for the merchant", async () => {
    const session = await open({ action: "login", metadata: { flow: "cancel" } });
    const page = await browser.newPage({ locale: "en-GB", viewport: PHONE });
    await page.goto(session.url);
    await waitForView(page, "intro");
    await page.click("#continue");
    await waitForView(page, "capture");
    await page.click('[data-view="capture"] [data-cancel]');
    await waitForView(page, "outcome");
    expect(await outcomeOf(page)).toMatchObject({ kind: "cancelled", title: "Cancelled", message: "You cancelled. No capture was taken." });
    await photograph(page, "en-cancelled");
    await page.context().close();
    expect((await readSession(merchant.keys.sk_test, session.session_id)).body).toMatchObject({
      state: "cancelled",
      result: { approved: false, reason: "person_cancelled" },
    });
  });

  it("a face the screen's light does not reach (video injected into the camera): the preflight asks for a dimmer room, nothing is recorded", async () => {
    const session = await open({ action: "login" });
    const page = await browser.newPage({ locale: "pt-BR", viewport: PHONE });
    await page.goto(screenUrl(session.url, ACCEPTED_SECONDS));
    await waitForView(page, "intro");
    await page.click("#continue");
    await waitForView(page, "capture");
    await waitForGates(page);
    await page.click("#record");
    await page.waitForFunction(() => document.body.dataset.light === "preflight");
    const guidance =
      "A luz da tela quase não chega ao seu rosto. Aumente o brilho da tela, aproxime-se ou afaste-se de uma janela ou lâmpada forte e toque de novo em Começar a leitura.";
    await page.waitForFunction((text) => document.getElementById("guidance")!.textContent === text, guidance);
    expect(await page.getAttribute("body", "data-light"), "the screen has its own colours back").toBeNull();
    expect(await page.isHidden("#recording"), "nothing was recorded").toBe(true);
    expect(await page.isEnabled("#record"), "the person may start again").toBe(true);
    await photograph(page, "pt-BR-screen-light");
    await page.click('[data-view="capture"] [data-cancel]');
    await waitForView(page, "outcome");
    await page.context().close();
    expect((await readSession(merchant.keys.sk_test, session.session_id)).body).toMatchObject({ state: "cancelled" });
  });

  it("a session token opened twice: the second screen says the link was already opened, the first goes on", async () => {
    const session = await open({ action: "login" });
    const first = await browser.newPage({ locale: "en-GB", viewport: PHONE });
    await first.goto(session.url);
    await waitForView(first, "intro");
    const second = await browser.newPage({ locale: "en-GB", viewport: PHONE });
    await second.goto(session.url);
    await waitForView(second, "error");
    expect(await second.textContent("#error-message")).toBe("This link has already been opened. Ask for a new one.");
    expect(await second.isHidden("#error-retry")).toBe(true);
    await photograph(second, "en-used");
    await second.context().close();
    await first.click('[data-view="intro"] [data-cancel]');
    await waitForView(first, "outcome");
    await first.context().close();
  });

  it("an expired session (the request clock past expires_at): the screen says it expired", async () => {
    const session = await open({ action: "login", ttl_seconds: 60 });
    const page = await browser.newPage({ locale: "pt-BR", viewport: PHONE });
    await page.context().setExtraHTTPHeaders({ "x-test-now": new Date(Date.now() + 61_000).toISOString() });
    await page.goto(session.url);
    await waitForView(page, "error");
    expect(await page.textContent("#error-message")).toBe("Esta sessão expirou. Peça um novo link.");
    await page.context().close();
    expect((await readSession(merchant.keys.sk_test, session.session_id, new Date(Date.now() + 61_000))).body).toMatchObject({
      state: "expired",
    });
  });

  it("a page opened without a token says what to do", async () => {
    const page = await browser.newPage({ locale: "es-ES", viewport: PHONE });
    await page.goto(`${service.own.server.url}/functions/v1/hosted-capture/session`);
    await waitForView(page, "error");
    expect(await page.textContent("#error-message")).toBe("Esta página se abrió sin una sesión. Abre el enlace que recibiste.");
    await page.context().close();
  });
});
