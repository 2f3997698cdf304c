/**
 * The hosted screen (`GET /functions/v1/hosted-capture/session#<session token>`): boots the session
 * with its token, shows what the session asks (client/screen/modes.ts, per action) in the
 * merchant's theme, explains and asks for the camera and the microphone, waits for the quality
 * gates, checks that the screen's light reaches the face (the light challenge's preflight), records
 * the reading (free, or paced by the nonce) with the screen lighting the face by the nonce's colour
 * sequence, posts the descriptor (version 2) and shows the outcome in words; the person may cancel
 * at any point before the outcome; a /v1 session's outcome then takes the person back to the
 * merchant. The words come from the service's catalogues, embedded in the page (`#messages`): the
 * person's locale, or the session's own once it boots.
 *
 * One view at a time; each view's heading takes the focus when it shows, so a screen reader reads
 * where the person is, and the guidance is a polite live region that speaks only when it changes.
 */
import { startAuthentication, startRegistration } from "@simplewebauthn/browser";
import { DECLINED_CEREMONY } from "../../shared/contracts/device";
import {
  type CancelReason,
  FREE_SECONDS,
  HANDOFF_FRAGMENT,
  type HandoffStatus,
  PACED_SECONDS,
  type ScreenBoot,
  type ScreenHandoff,
  SESSION_ENDED_MESSAGE,
  type SessionEnded,
  TOKEN_FRAGMENT,
} from "../../shared/contracts/hosted-screen";
import type { PresenceDescriptor } from "../../shared/engine/descriptor";
import { accentTokens, colours, ownAsset, type Scheme, shape } from "../../shared/lib/screen-theme";
import { FaceModels, type GateProblem, PresenceCapture } from "../capture/capture";
import { PREFLIGHT } from "../descriptor/light";
import { screenLight } from "../screen/light";
import { modeOf, type ScreenMode, type Words } from "../screen/modes";
import { type Cue, cueAt, pacedCues } from "../screen/paced";
import { passkeyRequest } from "../screen/passkey";

/** The screen's words in every locale the service speaks; the page is written in `locale` until a session asks for another. */
const catalogues = JSON.parse(document.getElementById("messages")!.textContent ?? "{}") as Record<string, Record<string, string>>;
let locale = document.documentElement.lang || "en";
let messages = catalogues[locale] ?? {};
const words: Words = (key, params = {}) =>
  (messages[key] ?? key).replace(/\{(\w+)\}/g, (_, name: string) => String(params[name] ?? `{${name}}`));

/**
 * Speaks `wanted` from now on (a /v1 session's locale, which its boot answers): the page's fixed
 * texts (`data-words`, and the `aria-label` and `alt` of `data-words-label`, `data-words-alt`) are
 * reworded, and the service's answers (the outcome's message) come in it too (post's Accept-Language).
 */
function speak(wanted: string): void {
  const catalogue = catalogues[wanted];
  if (!catalogue || wanted === locale) return;
  locale = wanted;
  messages = catalogue;
  document.documentElement.lang = wanted;
  for (const element of document.querySelectorAll<HTMLElement>("[data-words]")) element.textContent = words(element.dataset.words!);
  for (const element of document.querySelectorAll<HTMLElement>("[data-words-label]")) {
    element.setAttribute("aria-label", words(element.dataset.wordsLabel!));
  }
  for (const element of document.querySelectorAll<HTMLElement>("[data-words-alt]")) {
    element.setAttribute("alt", words(element.dataset.wordsAlt!));
  }
}

const api = new URL("./", location.href);
// The folder this script came from: the assets of its own version (D-406), the face worker and models beside it.
const assets = new URL("./", import.meta.url).href;
const $ = <T extends HTMLElement = HTMLElement>(id: string) => document.getElementById(id) as T;

/** `?seconds=5..30` shortens the capture (integrators' and the browser tests' short readings). */
const requestedSeconds = Number(new URL(location.href).searchParams.get("seconds"));
const override = Number.isFinite(requestedSeconds) && requestedSeconds >= 5 ? Math.min(30, requestedSeconds) : null;

type View = "loading" | "handoff" | "intro" | "capture" | "sending" | "outcome" | "error";

/** Shows one view and moves the focus to its heading. */
function show(view: View): void {
  for (const section of document.querySelectorAll<HTMLElement>("[data-view]")) section.hidden = section.dataset.view !== view;
  document.body.dataset.state = view;
  const heading = document.querySelector<HTMLElement>(`[data-view="${view}"] h1`);
  heading?.focus();
}

/** Why an answer of the service stopped the screen, as a catalogue key. */
class ScreenError extends Error {
  constructor(
    readonly key: string,
    readonly retry: boolean,
  ) {
    super(key);
  }
}

const errorKeys: Record<string, string> = {
  not_found: "screen.error.not_found",
  SESSION_ALREADY_CONSUMED: "screen.error.used",
  SESSION_EXPIRED: "screen.error.expired",
  SESSION_ENDED: "screen.error.ended",
  RATE_LIMITED: "screen.error.busy",
  HANDOFF_CODE_INVALID: "screen.error.handoff_invalid",
};

/** POSTs to the screen's endpoints; an error answer becomes a ScreenError with the person's words. */
async function post<T>(path: string, body: unknown, credential?: string): Promise<T> {
  let response: Response;
  try {
    response = await fetch(new URL(path, api), {
      method: "POST",
      headers: {
        "content-type": "application/json",
        "accept-language": locale,
        ...(credential ? { authorization: `Bearer ${credential}` } : {}),
      },
      body: JSON.stringify(body),
    });
  } catch {
    throw new ScreenError("screen.error.network", true);
  }
  const answer = (await response.json().catch(() => ({}))) as { code?: string };
  if (response.ok) return answer as T;
  const key = errorKeys[answer.code ?? ""] ?? (response.status === 429 ? "screen.error.busy" : "screen.error.failed");
  throw new ScreenError(key, response.status === 429 || response.status >= 500 || answer.code === "COMPLETION_IN_PROGRESS");
}

function showError(error: unknown, retry?: () => void): void {
  const known = error instanceof ScreenError ? error : new ScreenError("screen.error.failed", false);
  if (!(error instanceof ScreenError)) console.error(error);
  $("error-message").textContent = words(known.key);
  const button = $<HTMLButtonElement>("error-retry");
  button.hidden = !(known.retry && retry);
  button.onclick = retry ?? null;
  show("error");
}

// ---------------------------------------------------------------------------------------------
// Theme
// ---------------------------------------------------------------------------------------------

/**
 * Applies the merchant's theme now and whenever the person's colour scheme changes; a /v1
 * session's branding goes over it: its accent as the primary colour, its headline under the name,
 * its footer note, and its logo when the service serves it (the screen loads nothing from another
 * host, the theme's logos alike).
 */
function applyTheme(boot: ScreenBoot): void {
  const branding = boot.mode?.branding ?? {};
  const theme: Record<string, string | number> = { ...boot.theme.theme, ...(branding.accent ? accentTokens(branding.accent) : {}) };
  const root = document.documentElement;
  for (const [property, value] of Object.entries(shape(theme))) root.style.setProperty(property, value);
  const dark = matchMedia("(prefers-color-scheme: dark)");
  const paint = () => {
    const scheme: Scheme = dark.matches ? "dark" : "light";
    for (const [property, value] of Object.entries(colours(theme, scheme))) root.style.setProperty(property, value);
    root.dataset.scheme = scheme;
  };
  paint();
  dark.addEventListener("change", paint);
  for (const token of ["font_heading_url", "font_body_url"]) {
    const href = ownAsset(theme[token], location.origin);
    if (href && !document.querySelector(`link[href="${CSS.escape(href)}"]`)) {
      document.head.append(Object.assign(document.createElement("link"), { rel: "stylesheet", href }));
    }
  }
  const logo = $<HTMLImageElement>("logo");
  const logoUrl = ownAsset(branding.logo_url, location.origin) ?? ownAsset(theme.logo_square_url, location.origin);
  if (logoUrl) {
    logo.onload = () => {
      logo.hidden = false;
    };
    logo.src = logoUrl;
  }
  $("brand-name").textContent = boot.display_name;
  $("brand-headline").textContent = branding.headline ?? "";
  $("brand-headline").hidden = !branding.headline;
  $("footer-note").textContent = branding.footer_note ?? "";
  $("footer-note").hidden = !branding.footer_note;
}

// ---------------------------------------------------------------------------------------------
// The flow
// ---------------------------------------------------------------------------------------------

/**
 * What the URL's fragment carries (never sent to any server by the browser), then out of the
 * address bar: the session token, or the handoff code of another device's QR code.
 */
function takeFragment(): { token: string } | { handoff: string } | null {
  const fragment = decodeURIComponent(location.hash.slice(1));
  if (location.hash) history.replaceState(null, "", location.pathname + location.search);
  if (fragment.startsWith(HANDOFF_FRAGMENT)) {
    return fragment.length > HANDOFF_FRAGMENT.length ? { handoff: fragment.slice(HANDOFF_FRAGMENT.length) } : null;
  }
  const token = fragment.startsWith(TOKEN_FRAGMENT) ? fragment.slice(TOKEN_FRAGMENT.length) : fragment;
  return token.length > 0 ? { token } : null;
}

/** Whether this device has a camera at all (before any permission, browsers list the kinds of device). */
async function hasCamera(): Promise<boolean> {
  if (!navigator.mediaDevices?.enumerateDevices) return false;
  try {
    return (await navigator.mediaDevices.enumerateDevices()).some((device) => device.kind === "videoinput");
  } catch {
    return true;
  }
}

const HANDOFF_POLL_MS = 2000;

/**
 * On a device without a camera: the session goes to the person's phone. A QR code of the phone's
 * link (single use, two minutes), its state while the phone takes over, a new code when it expired,
 * and the choice to go on here after all.
 */
async function handOff(token: string): Promise<void> {
  let handoff: ScreenHandoff;
  try {
    handoff = await post<ScreenHandoff>("handoff", { session_token: token });
  } catch (error) {
    return showError(error, () => handOff(token).catch((failure: unknown) => showError(failure)));
  }
  $<HTMLImageElement>("handoff-qr").src = `data:image/svg+xml;charset=utf-8,${encodeURIComponent(handoff.qr_svg)}`;
  const status = $("handoff-status");
  const renew = $<HTMLButtonElement>("handoff-renew");
  status.textContent = words("screen.handoff.waiting");
  renew.hidden = true;
  let polling = true;
  renew.onclick = () => handOff(token).catch((failure: unknown) => showError(failure));
  $<HTMLButtonElement>("handoff-here").onclick = () => {
    polling = false;
    show("loading");
    start(token).catch((failure: unknown) => showError(failure));
  };
  show("handoff");
  while (polling) {
    await new Promise((resolve) => setTimeout(resolve, HANDOFF_POLL_MS));
    if (!polling) return;
    const now = await post<HandoffStatus>("handoff/status", { session_token: token, handoff_id: handoff.handoff_id }).catch(() => null);
    if (!now || now.state === "pending") continue;
    polling = false;
    if (now.state === "claimed") {
      status.textContent = words("screen.handoff.claimed");
      $<HTMLImageElement>("handoff-qr").hidden = true;
      $<HTMLButtonElement>("handoff-here").hidden = true;
    } else if (now.state === "expired") {
      status.textContent = words("screen.handoff.expired");
      renew.hidden = false;
    }
  }
}

/** On the phone: the handoff code from the QR code becomes the session token, once. */
async function claimHandoff(code: string): Promise<void> {
  let claimed: { session_token: string };
  try {
    claimed = await post<{ session_token: string }>("../handoff-register-public/claim", { handoff_code: code });
  } catch (error) {
    return showError(error);
  }
  await start(claimed.session_token);
}

class Screen {
  private models: Promise<FaceModels> | null = null;
  private capture: PresenceCapture | null = null;
  private gateTimer: ReturnType<typeof setInterval> | undefined;
  private ended = false;

  constructor(
    private readonly boot: ScreenBoot,
    private readonly mode: ScreenMode,
  ) {}

  private get paced(): boolean {
    return !this.faceOnly && $<HTMLInputElement>("paced").checked;
  }

  /**
   * A step-up's capture (the boot's `presence: "face"`, D-428): the camera alone under the screen's
   * light, nothing read aloud and no microphone asked for; the words say so.
   */
  private get faceOnly(): boolean {
    return this.boot.presence === "face";
  }

  /** The catalogue key of a text that a face-only capture words differently (`screen.face.…` beside `screen.…`). */
  private key(key: string): string {
    return this.faceOnly ? key.replace(/^screen\./, "screen.face.") : key;
  }

  private get seconds(): number {
    return override ?? (this.paced ? PACED_SECONDS : FREE_SECONDS);
  }

  /** The introduction: what is asked, why the camera and microphone, the consent and the paced option. */
  intro(): void {
    const { boot, mode } = this;
    $("intro-title").textContent = mode.title(boot, words);
    $("intro-lead").textContent = mode.lead(boot, words);
    const terms = $("intro-terms");
    terms.replaceChildren(
      ...mode
        .terms(boot, words, locale)
        .flatMap((term) => [
          Object.assign(document.createElement("dt"), { textContent: term.label }),
          Object.assign(document.createElement("dd"), { textContent: term.value }),
        ]),
    );
    terms.hidden = terms.childElementCount === 0;
    const consent = mode.consent(boot, words);
    $("consent-row").hidden = consent === null;
    $("consent-label").textContent = consent ?? "";
    // The fixed texts a face-only capture words its own way, kept under their keys so a change of locale rewords them too.
    for (const [id, key] of [
      ["why-title", "screen.why.title"],
      ["continue", "screen.action.continue"],
      ["record", "screen.action.record"],
    ] as const) {
      $(id).dataset.words = this.key(key);
      $(id).textContent = words(this.key(key));
    }
    $("paced-row").hidden = this.faceOnly;
    const why = () => {
      $("why-body").textContent = words(this.key("screen.why.body"), { seconds: this.seconds });
    };
    why();
    $("paced-label").textContent = words("screen.paced.label", { seconds: override ?? PACED_SECONDS });
    $("paced").addEventListener("change", why);
    $("continue").addEventListener("click", () => this.proceed());
    for (const button of document.querySelectorAll<HTMLButtonElement>("[data-cancel]")) {
      button.addEventListener("click", () => this.cancel("person_cancelled"));
    }
    // The models load while the person reads (seconds of download and compilation); started before the boot where there is a camera.
    this.models = earlyModels ?? FaceModels.load(assets);
    this.models.catch(() => {});
    show("intro");
  }

  /** Continue: the consent if asked, then the devices and the gates. */
  private async proceed(): Promise<void> {
    const consent = $<HTMLInputElement>("consent");
    if (!$("consent-row").hidden && !consent.checked) {
      $("consent-error").hidden = false;
      consent.setAttribute("aria-invalid", "true");
      consent.focus();
      return;
    }
    $("consent-error").hidden = true;
    // Once: a second press must not ask for the devices twice.
    $<HTMLButtonElement>("continue").disabled = true;
    $("capture-title").textContent = words("screen.gates.title");
    $("reading").hidden = true;
    $("recording").hidden = true;
    $("gates").hidden = false;
    $<HTMLButtonElement>("record").hidden = false;
    $<HTMLButtonElement>("record").disabled = true;
    $("guidance").textContent = words("screen.guidance.loading");
    show("capture");
    let models: FaceModels;
    try {
      models = await this.models!;
    } catch (error) {
      console.error(error);
      return showError(new ScreenError("screen.error.unsupported", false));
    }
    $("guidance").textContent = words(this.key("screen.camera.asking"));
    try {
      this.capture = await PresenceCapture.open({ assets, video: $<HTMLVideoElement>("camera"), microphone: !this.faceOnly }, models);
    } catch (error) {
      const denied = error instanceof DOMException && (error.name === "NotAllowedError" || error.name === "SecurityError");
      return this.cancel(denied ? "permission_denied" : "camera_unavailable");
    }
    this.watchGates();
  }

  /**
   * The gates, every 200 ms: each item passed or not, and the first problem's guidance (spoken when
   * it changes); once they pass, `notice` (a catalogue key) if given, else the invitation to start.
   */
  private watchGates(notice?: string): void {
    const record = $<HTMLButtonElement>("record");
    record.onclick = () => {
      clearInterval(this.gateTimer);
      this.start().catch((error: unknown) => showError(error));
    };
    const items: Record<string, GateProblem[]> = { face: ["no_face", "hold_still"], light: ["more_light"], camera: ["camera_slow"] };
    this.gateTimer = setInterval(() => {
      const gates = this.capture!.gates();
      for (const [gate, problems] of Object.entries(items)) {
        const passed =
          !problems.some((problem) => gates.problems.includes(problem)) && !(gate === "light" && gates.problems.includes("no_face"));
        const item = document.querySelector<HTMLElement>(`[data-gate="${gate}"]`)!;
        item.dataset.passed = String(passed);
        item.querySelector(".gate-state")!.textContent = words(passed ? "screen.gate.passed" : "screen.gate.waiting");
      }
      // Once the gates have passed the button stays enabled: a flicker should not take it away under the finger.
      if (gates.ready) record.disabled = false;
      const guidance =
        gates.ready || !record.disabled ? this.key(notice ?? "screen.guidance.ready") : `screen.guidance.${gates.problems[0]}`;
      const text = words(guidance);
      if ($("guidance").textContent !== text) $("guidance").textContent = text;
    }, 200);
  }

  /**
   * Start: the preflight's flash first (docs/presence-descriptor.md 11.2 step 1). A reflection too
   * weak for the light check (a bright room, a dim screen, a face far from it) would fail after
   * the whole reading, so the person is told what to change and starts again; else the reading.
   */
  private async start(): Promise<void> {
    const record = $<HTMLButtonElement>("record");
    record.disabled = true;
    $("guidance").textContent = words("screen.guidance.preflight");
    const depth = await this.capture!.preflight(screenLight);
    if (this.ended) return;
    if (depth === null || depth < PREFLIGHT.minDepth) {
      record.disabled = false;
      return this.watchGates("screen.guidance.screen_light");
    }
    await this.record();
  }

  /** Records the reading with the progress shown and the screen lighting the face, then completes. */
  private async record(): Promise<void> {
    const seconds = this.seconds;
    const paced = this.paced;
    $("capture-title").textContent = words(this.key("screen.recording.title"));
    $("gates").hidden = true;
    $<HTMLButtonElement>("record").hidden = true;
    $("guidance").textContent = "";
    $("reading").hidden = false;
    $("recording").hidden = false;
    document.body.dataset.recording = "true";
    const progress = $<HTMLProgressElement>("progress");
    progress.max = seconds;
    progress.value = 0;
    const lines = words("screen.reading.lines").split("|");
    const cues: Cue[] = paced ? pacedCues(this.boot.capture_nonce, seconds, lines.join(" ").split(/\s+/)) : [];
    const reading = $("reading");
    if (paced) reading.replaceChildren(Object.assign(document.createElement("p"), { className: "cue" }));
    else if (this.faceOnly) {
      // Nothing to read: the face stays before the screen while it changes colour.
      reading.replaceChildren(
        Object.assign(document.createElement("p"), { className: "hint", textContent: words("screen.face.recording.hint") }),
      );
    } else {
      reading.replaceChildren(
        Object.assign(document.createElement("p"), { className: "hint", textContent: words("screen.recording.hint") }),
        ...lines.map((line) => Object.assign(document.createElement("p"), { className: "line", textContent: line })),
      );
    }
    $("capture-title").focus();
    let lastLeft = -1;
    const descriptor = await this.capture!.record(
      seconds,
      this.boot.capture_nonce,
      (elapsed) => {
        progress.value = elapsed;
        const left = Math.max(0, Math.ceil(seconds - elapsed));
        if (left !== lastLeft) {
          lastLeft = left;
          $("time-left").textContent = words("screen.recording.left", { seconds: left });
          progress.setAttribute("aria-valuetext", words("screen.recording.left", { seconds: left }));
        }
        if (paced) this.showCue(cueAt(cues, elapsed));
      },
      { light: screenLight, ...(paced ? { schedule: "nonce-v1" as const } : {}) },
    );
    if (this.ended) return;
    document.body.dataset.recording = "false";
    await this.closeDevices();
    await this.complete(descriptor);
  }

  /** The paced reading's cue: the words to read now, or breathe in. */
  private showCue(cue: Cue | undefined): void {
    const element = document.querySelector<HTMLElement>("#reading .cue");
    if (!element || !cue) return;
    const text = cue.kind === "speak" ? cue.text : words("screen.paced.breathe");
    if (element.textContent !== text) {
      element.textContent = text;
      element.dataset.kind = cue.kind;
    }
  }

  private async complete(descriptor: PresenceDescriptor): Promise<void> {
    show("sending");
    try {
      const signed = await this.signedOnDevice(descriptor);
      const body = { ...this.mode.completion(this.boot, descriptor), ...signed };
      const ended = await post<SessionEnded>("complete", body, this.boot.screen_token);
      if (!ended.outcome.approved) await forgetRegistration(this.boot, signed.device_registration);
      this.outcome(ended);
    } catch (error) {
      showError(error, () => this.complete(descriptor));
    }
  }

  /**
   * Live mode: the person's passkey signs this capture (client/screen/passkey.ts), registering their
   * first one on an enrolment. A ceremony refused on the device (NotAllowedError) sends
   * DECLINED_CEREMONY in its place, any other failure no device answer: the service then ends the
   * session refused (UNAUTHORIZED_DEVICE, `user_not_verified` or `device_missing`) and says why. The sandbox's boot
   * serves no ceremony, and the capture is sent without a device.
   */
  private async signedOnDevice(descriptor: PresenceDescriptor): Promise<{ device_registration?: unknown; device_assertion?: unknown }> {
    const request = await passkeyRequest(this.boot, descriptor);
    if (!request) return {};
    if (request.ceremony === "register") {
      // A passkey the person made at another merchant signs first: their known face then enrols them
      // here without a second passkey. A device with none for the service refuses (NotAllowedError,
      // as a cancel does), and the person registers one (D-641).
      try {
        return { [request.existing.field]: await startAuthentication({ optionsJSON: request.existing.optionsJSON }) };
      } catch {}
    }
    try {
      const answer =
        request.ceremony === "register"
          ? await startRegistration({ optionsJSON: request.optionsJSON })
          : await startAuthentication({ optionsJSON: request.optionsJSON });
      return { [request.field]: answer };
    } catch (error) {
      // NotAllowedError: the person cancelled, or the device's biometric or PIN did not pass (WebAuthn
      // does not say which). Said so, the refusal reads user_not_verified, not device_missing.
      return error instanceof Error && error.name === DECLINED_CEREMONY.declined ? { [request.field]: DECLINED_CEREMONY } : {};
    }
  }

  /** Ends the session without a capture (the cancel button, or devices that could not be used). */
  private async cancel(reason: CancelReason): Promise<void> {
    if (this.ended) return;
    this.ended = true;
    clearInterval(this.gateTimer);
    await this.closeDevices();
    show("sending");
    try {
      this.outcome(await post<SessionEnded>("cancel", { reason }, this.boot.screen_token));
    } catch (error) {
      this.ended = false;
      showError(error, () => this.cancel(reason));
    }
  }

  private async closeDevices(): Promise<void> {
    const capture = this.capture;
    this.capture = null;
    await capture?.close().catch(() => {});
  }

  /** The outcome: confirmed, not confirmed (the reason in words) or cancelled; the session has ended. */
  private outcome(ended: SessionEnded): void {
    this.ended = true;
    const kind = ended.outcome.approved ? "approved" : ended.state === "cancelled" ? "cancelled" : "refused";
    $("outcome").dataset.kind = kind;
    $("outcome-title").textContent = words(`screen.outcome.${kind}`);
    $("outcome-message").textContent = ended.outcome.user_message;
    $("outcome").dataset.reason = ended.outcome.reason ?? "";
    const receipt = ended.outcome.receipt_code;
    $("outcome-receipt").hidden = !receipt;
    $("receipt-code").textContent = receipt ?? "";
    $("outcome-again").hidden = kind === "approved" || ended.return_to !== undefined;
    $("outcome-again").textContent = words("screen.outcome.again", { merchant: this.boot.display_name });
    show("outcome");
    tellOpener(this.boot, ended);
    if (ended.return_to) sendBack(ended.return_to, this.boot.display_name);
  }
}

/**
 * A passkey registered for an enrolment the service then refused was stored nowhere: the page tells
 * the authenticator so (WebAuthn's signal API), which removes it, or it would be offered, and
 * refused, at the person's next enrolment, which asks first for a passkey the device holds (D-641).
 * Browsers without the signal keep it; nothing else depends on it.
 */
async function forgetRegistration(boot: ScreenBoot, registration: unknown): Promise<void> {
  const id = (registration as { id?: unknown } | undefined)?.id;
  const signal = (PublicKeyCredential as unknown as { signalUnknownCredential?: (o: object) => Promise<void> }).signalUnknownCredential;
  if (typeof id !== "string" || boot.passkey?.ceremony !== "register" || !signal) return;
  await signal.call(PublicKeyCredential, { rpId: boot.passkey.options.rp.id, credentialId: id }).catch(() => {});
}

/**
 * A screen opened in a popup by the merchant's own page (an SDK on the merchant's origin: D-643)
 * tells that page the session ended, by postMessage to the origin the merchant's server named and to
 * no other (a page of any other origin in the opener's place receives nothing). What it says is a
 * signal, not a proof: the merchant's server reads the result with its key. The popup stays open on
 * the outcome; the opener closes it.
 */
function tellOpener(boot: ScreenBoot, ended: SessionEnded): void {
  const opener = window.opener as Window | null;
  if (!boot.opener_origin || !opener) return;
  const { approved, reason } = ended.outcome;
  opener.postMessage(
    { type: SESSION_ENDED_MESSAGE, session_id: ended.session_id, state: ended.state, approved, reason },
    boot.opener_origin,
  );
}

/** How long the outcome of a /v1 session shows before the page takes the person back (they may go at once, or stay). */
const RETURN_SECONDS = 5;

/**
 * A /v1 session's way back (resource API 3.2: the return_url, or the cancel_url after a cancel,
 * with session_id and status): the outcome stays in view for RETURN_SECONDS, with a link to go at
 * once and a button to stay (a time limit the person can turn off: WCAG 2.2.1).
 */
function sendBack(returnTo: string, merchant: string): void {
  const link = $<HTMLAnchorElement>("return-link");
  link.href = returnTo;
  link.textContent = words("screen.return.continue", { merchant });
  $("return-note").textContent = words("screen.return.going", { merchant });
  $("return-note").hidden = false;
  $("return-stay").hidden = false;
  $("outcome-return").hidden = false;
  const timer = setTimeout(() => location.assign(returnTo), RETURN_SECONDS * 1000);
  $<HTMLButtonElement>("return-stay").onclick = () => {
    clearTimeout(timer);
    $("return-note").hidden = true;
    $("return-stay").hidden = true;
    link.focus();
  };
}

/**
 * The face models, started as soon as the page knows the device has a camera: the face worker's
 * script and weights download while the session boots (D-407).
 */
let earlyModels: Promise<FaceModels> | null = null;

async function main(): Promise<void> {
  show("loading");
  const taken = takeFragment();
  if (!taken) return showError(new ScreenError("screen.error.no_token", false));
  if ("handoff" in taken) return claimHandoff(taken.handoff);
  if (!(await hasCamera())) return handOff(taken.token);
  earlyModels = FaceModels.load(assets);
  earlyModels.catch(() => {});
  await start(taken.token);
}

/** Boots with the token (again after a network failure: the token is only spent once the service answered). */
async function start(token: string): Promise<void> {
  let boot: ScreenBoot;
  try {
    boot = await post<ScreenBoot>("boot", { session_token: token });
  } catch (error) {
    return showError(error, () => {
      show("loading");
      start(token).catch((failure: unknown) => showError(failure));
    });
  }
  speak(boot.locale);
  const mode = modeOf(boot.action);
  applyTheme(boot);
  if (!mode) return showError(new ScreenError("screen.error.unsupported", false));
  document.title = mode.title(boot, words);
  new Screen(boot, mode).intro();
}

main().catch((error: unknown) => showError(error));
