/**
 * The person's page (`GET /functions/v1/me`; docs/decisions.md, D-465 to D-472, D-540 to D-546):
 * sign-in by proving presence on the hosted screen, in a window of its own, then everything the
 * person authorised at every merchant, in plain words, each with the way to stop it. No framework:
 * the server writes the page's frame and words (functions/me/page.ts), this script fills the lists
 * from the function's reads and sends the person's decisions, each confirmed first in a dialog
 * that says what it does. After each change the lists are read again and a polite live region
 * says what happened.
 */

import { type PublicKeyCredentialRequestOptionsJSON, startAuthentication } from "@simplewebauthn/browser";
import {
  CSRF_HEADER,
  ME_ROUTES,
  type MeAct,
  type MeDevice,
  type MeDeviceRenamed,
  type MeDisclosure,
  type MeErased,
  type MeExportCreated,
  type MeLedger,
  type MeMandate,
  type MeMerchant,
  type MePasskeyOptions,
  type MeReads,
  type MeScreen,
  type MeSession,
  type MeSignedIn,
} from "../../shared/contracts/me";
import { ceilingWords, formatMinorUnits, instantWords, type Words } from "../screen/modes";

const $ = <T extends HTMLElement = HTMLElement>(id: string) => document.getElementById(id) as T;
const body = document.body;
const BASE = body.dataset.base ?? "/functions/v1/me";
const locale = document.documentElement.lang || "en";
const messages = JSON.parse($("messages").textContent ?? "{}") as Record<string, string>;

/** A word of the page in its locale, its `{placeholders}` filled. */
const words: Words = (key, params = {}) =>
  (messages[key] ?? key).replace(/\{(\w+)\}/g, (_, name: string) => String(params[name] ?? `{${name}}`));
const when = (iso: string) => instantWords(iso, locale);
const listOf = (items: string[]) => new Intl.ListFormat(locale, { type: "conjunction" }).format(items);

/** Where this tab keeps the session's CSRF token (D-542): this tab only, gone when it closes. */
const CSRF_KEY = "me.csrf";
/** A sign-in whose screen opened in this tab rather than a window of its own (its session id). */
const PENDING_KEY = "me.sign-in";
/** An erasure whose proof's screen opened in this tab: what it erases and the proof (D-611). */
const ERASE_KEY = "me.erase";

/** A refusal of the function: its status, code and reason. */
class Refusal extends Error {
  constructor(
    readonly status: number,
    readonly code: string,
    readonly reason?: string,
  ) {
    super(code);
  }
}

/** A call to the function; a refusal throws. A session that ended sends the person back to the sign-in. */
async function call<T>(route: string, init: { method?: "GET" | "POST"; body?: unknown } = {}): Promise<T> {
  const method = init.method ?? (init.body === undefined ? "GET" : "POST");
  const headers: Record<string, string> = { accept: "application/json" };
  if (method === "POST") {
    headers["content-type"] = "application/json";
    headers[CSRF_HEADER] = sessionStorage.getItem(CSRF_KEY) ?? "";
  }
  let response: Response;
  try {
    response = await fetch(BASE + route, {
      method,
      headers,
      credentials: "same-origin",
      body: method === "POST" ? JSON.stringify(init.body ?? {}) : undefined,
    });
  } catch {
    throw new Refusal(0, "network");
  }
  const answer = (await response.json().catch(() => ({}))) as Record<string, unknown>;
  if (response.ok) return answer as T;
  const refusal = new Refusal(response.status, String(answer.code ?? "failed"), answer.reason as string | undefined);
  if (refusal.code === "PERSON_SESSION_REQUIRED" || refusal.code === "PERSON_SESSION_EXPIRED") {
    sessionStorage.removeItem(CSRF_KEY);
    if (body.dataset.view !== "signed-out") showSignedOut(body.dataset.view === "signed-in" ? words("me.session.ended") : "");
  }
  throw refusal;
}

/** Says `text` in the live region (an error as such). */
function notify(text: string, kind: "done" | "error" = "done"): void {
  const notice = $("notice");
  notice.dataset.kind = kind;
  notice.textContent = "";
  // A change the screen reader hears even when the same words come twice.
  requestAnimationFrame(() => {
    notice.textContent = text;
  });
}

const failure = (error: unknown) => words(error instanceof Refusal && error.status === 0 ? "me.error.network" : "me.error.failed");

/** Shows one view and gives its heading the focus. */
function show(view: "loading" | "signed-out" | "signed-in"): void {
  body.dataset.view = view;
  for (const section of document.querySelectorAll<HTMLElement>("main > section[data-view]")) {
    section.hidden = section.dataset.view !== view;
  }
  $("sign-out").hidden = view !== "signed-in";
  document.querySelector<HTMLElement>(`section[data-view="${view}"] h1`)?.focus();
}

/** An element with text, attributes and children. */
function el<K extends keyof HTMLElementTagNameMap>(
  tag: K,
  props: Partial<Record<string, string>> = {},
  ...children: (Node | string | null | false)[]
): HTMLElementTagNameMap[K] {
  const element = document.createElement(tag);
  for (const [name, value] of Object.entries(props)) if (value !== undefined) element.setAttribute(name, value);
  for (const child of children) if (child) element.append(child);
  return element;
}

const button = (text: string, onClick: () => void, props: Partial<Record<string, string>> = {}) => {
  const made = el("button", { type: "button", class: "secondary small", ...props }, text);
  made.addEventListener("click", onClick);
  return made;
};

/**
 * The confirmation every irreversible act goes through: a modal dialog (focus held inside, Escape
 * cancels) with the consequences in words and the confirming button named by the act. True when confirmed.
 */
function confirmed({ title, paragraphs, yes }: Question): Promise<boolean> {
  const dialog = $<HTMLDialogElement>("confirm");
  $("confirm-title").textContent = title;
  $("confirm-body").replaceChildren(...paragraphs.map((text) => el("p", {}, text)));
  $("confirm-yes").textContent = yes;
  // Cancelled, the focus goes back to the control that asked (confirmed, the act moves it to its section).
  const opener = document.activeElement instanceof HTMLElement ? document.activeElement : null;
  return new Promise((resolve) => {
    const close = (answer: boolean) => {
      $("confirm-yes").onclick = null;
      $("confirm-no").onclick = null;
      dialog.onclose = null;
      if (dialog.open) dialog.close();
      if (!answer) opener?.focus();
      resolve(answer);
    };
    $("confirm-yes").onclick = () => close(true);
    $("confirm-no").onclick = () => close(false);
    dialog.onclose = () => close(false);
    dialog.showModal();
    $("confirm-no").focus();
  });
}

// ——— Sign-in ———

/**
 * A way to open the capture screen that signs the person in (D-544). Today the merchant's link
 * (D-465); the passkey that names the person (issue 27) is one more entry: its `begin` asks the
 * browser for the discoverable credential, sends the assertion, and answers the capture screen
 * that confirms the face, and the rest (the screen, the finish, the session) is shared.
 */
interface SignInMethod {
  /** The button's `data-method`. */
  id: string;
  /** Whether this browser, on this link, can use it. */
  available(): boolean;
  /** Opens a sign-in: the capture screen to prove presence on. */
  begin(): Promise<MeScreen>;
}

const link = new URLSearchParams(location.search);
const merchantLink: SignInMethod = {
  id: "merchant-link",
  available: () => Boolean(link.get(body.dataset.linkMerchant ?? "merchant")),
  begin: () =>
    call<MeScreen>(ME_ROUTES.signIn, {
      body: {
        merchant_id: link.get(body.dataset.linkMerchant ?? "merchant"),
        environment: linkEnvironment(),
      },
    }),
};

/** The environment the page's link names (live when absent, D-541). */
const linkEnvironment = () => (link.get(body.dataset.linkEnvironment ?? "environment") === "test" ? "test" : "live");

/**
 * The passkey that names the person (D-601): the service's challenge for this browser, the
 * authenticator's discoverable credential (no allowCredentials: it offers the person's own), the
 * assertion sent; the answer is the capture screen that confirms that person's face.
 */
const passkey: SignInMethod = {
  id: "passkey",
  available: () => typeof PublicKeyCredential !== "undefined",
  begin: async () => {
    const { options } = await call<MePasskeyOptions>(ME_ROUTES.passkeyOptions, { body: { environment: linkEnvironment() } });
    let assertion: unknown;
    try {
      assertion = await startAuthentication({ optionsJSON: options as unknown as PublicKeyCredentialRequestOptionsJSON });
    } catch {
      // The person cancelled, or this device holds no passkey of the service.
      throw new Refusal(403, "UNAUTHORIZED_DEVICE", "cancelled");
    }
    return call<MeScreen>(ME_ROUTES.passkeySignIn, { body: { environment: linkEnvironment(), challenge: options.challenge, assertion } });
  },
};

const signInMethods: SignInMethod[] = [passkey, merchantLink];
const methodButtons = () => document.querySelectorAll<HTMLButtonElement>("#sign-in-methods [data-method]");

/** How often the page asks whether the screen is done. */
const POLL_MS = 1500;

/**
 * Opens `screen` in a window of its own (D-540) and asks `attempt` until it is no longer pending:
 * its answer, or the refusal. When the window cannot open (a blocker), the screen opens in this
 * tab and `fallback` is kept for when the person comes back. The window closes once it is done.
 */
async function throughScreen<T>(screen: MeScreen, attempt: () => Promise<T | "pending">, onOpened: () => void, fallback?: () => void) {
  const opened = window.open(screen.url, "me-screen");
  if (!opened) {
    fallback?.();
    location.assign(screen.url);
    return new Promise<never>(() => {});
  }
  onOpened();
  const reopen = $("sign-in-reopen");
  reopen.onclick = () => window.open(screen.url, "me-screen");
  const deadline = Date.parse(screen.expires_at) + 60_000;
  try {
    for (;;) {
      const closedBefore = opened.closed;
      const answer = await attempt();
      if (answer !== "pending") return answer;
      if (closedBefore || Date.now() > deadline) throw new Refusal(401, "SIGN_IN_FAILED", "expired");
      await new Promise((resolve) => setTimeout(resolve, POLL_MS));
    }
  } finally {
    if (!opened.closed) opened.close();
    window.focus();
  }
}

/** The finish of a sign-in: the session, or still pending. */
async function finish(sessionId: string): Promise<MeSignedIn | "pending"> {
  try {
    return await call<MeSignedIn>(ME_ROUTES.signInFinish, { body: { session_id: sessionId } });
  } catch (error) {
    if (error instanceof Refusal && error.code === "SIGN_IN_PENDING") return "pending";
    throw error;
  }
}

async function signIn(method: SignInMethod): Promise<void> {
  const status = $("sign-in-status");
  for (const start of methodButtons()) start.disabled = true;
  status.textContent = words("me.signin.waiting");
  try {
    const screen = await method.begin();
    const signedIn = await throughScreen(
      screen,
      () => finish(screen.session_id),
      () => {
        status.textContent = words("me.signin.opened");
        $("sign-in-reopen").hidden = false;
      },
      () => sessionStorage.setItem(PENDING_KEY, screen.session_id),
    );
    await signedInAs(signedIn);
  } catch (error) {
    status.textContent = signInRefusal(error);
  } finally {
    for (const start of methodButtons()) start.disabled = false;
    $("sign-in-reopen").hidden = true;
  }
}

function signInRefusal(error: unknown): string {
  if (!(error instanceof Refusal)) return words("me.error.failed");
  if (error.status === 429) return words("me.signin.refused");
  if (error.code === "UNAUTHORIZED_DEVICE") return words("me.signin.passkey_failed");
  if (error.reason === "expired" || error.reason === "stale") return words("me.signin.expired");
  if (error.code === "SIGN_IN_FAILED") return words("me.signin.failed");
  return failure(error);
}

async function signedInAs(signedIn: MeSignedIn): Promise<void> {
  sessionStorage.setItem(CSRF_KEY, signedIn.csrf_token);
  $("sign-in-status").textContent = "";
  await showSignedIn(signedIn);
}

function showSignedOut(note = ""): void {
  // What the signed-in page last said (an act done, a window open) no longer holds: the note says what does.
  $("notice").textContent = "";
  const usable = signInMethods.filter((method) => method.available());
  for (const method of signInMethods) {
    const control = document.querySelector<HTMLElement>(`[data-method="${method.id}"]`);
    if (control) control.hidden = !usable.includes(method);
  }
  $("sign-in-via").hidden = !merchantLink.available();
  $("sign-in-nolink").hidden = merchantLink.available();
  // Without a merchant's link the passkey is the way in, where the browser has one: say so rather than only "use a link".
  if (passkey.available()) $("sign-in-nolink").textContent = words("me.signin.nolink.passkey");
  $("sign-in-status").textContent = note;
  show("signed-out");
}

// ——— Signed in ———

async function showSignedIn(session: MeSession): Promise<void> {
  $("session-until").textContent = words("me.session.until", { time: when(session.expires_at) });
  $("environment-note").hidden = session.environment !== "test";
  await refresh();
  show("signed-in");
  if (!sessionStorage.getItem(CSRF_KEY)) notify(words("me.session.other_tab"), "error");
}

/** Reads everything again and writes every list. */
async function refresh(): Promise<void> {
  const [mandates, merchants, ledger, disclosures, receipts, devices] = await Promise.all([
    call<MeReads["mandates"]>(ME_ROUTES.mandates),
    call<MeReads["merchants"]>(ME_ROUTES.merchants),
    call<MeLedger>(ME_ROUTES.consentLedger),
    call<MeReads["disclosures"]>(ME_ROUTES.disclosures),
    call<MeReads["receipts"]>(ME_ROUTES.receipts),
    call<MeReads["devices"]>(ME_ROUTES.devices),
  ]);
  renderAgents(mandates.mandates);
  renderMerchants(merchants.merchants, ledger, mandates.mandates);
  renderDisclosures(disclosures.disclosures);
  renderReceipts(receipts.acts);
  renderDevices(devices.devices);
  renderErase(merchants.merchants);
}

const partBody = (id: string) => document.querySelector<HTMLElement>(`#${id} .part-body`)!;
const standing = (mandate: MeMandate) => mandate.status === "active" || mandate.status === "exhausted";
const agentName = (mandate: MeMandate) => mandate.agent_display_name ?? mandate.granted_to;

/**
 * Does `run`, then says what it answers, reads everything again and puts the focus on `section`'s
 * heading; a refusal is said in `explain`'s words (the generic ones by default).
 */
async function act(section: string, run: () => Promise<string>, explain: (error: unknown) => string = failure): Promise<void> {
  try {
    const done = await run();
    await refresh();
    notify(done);
    $(`${section}-title`).focus();
  } catch (error) {
    if (!(error instanceof Refusal && error.code.startsWith("PERSON_SESSION"))) notify(explain(error), "error");
  }
}

/** The question an irreversible act asks first (D-545): its title, its consequences, the confirming button's name. */
interface Question {
  title: string;
  paragraphs: string[];
  yes: string;
}

/** Asks `question` in the dialog; only once the person confirms, does `run` as `act` does (for `section`). */
async function confirmThenAct(question: Question, section: string, run: () => Promise<string>): Promise<void> {
  if (await confirmed(question)) await act(section, run);
}

/** A ceiling with nulls as the hosted screen's words take it. */
const ceilingOf = (mandate: MeMandate) =>
  ceilingWords(
    {
      amount: mandate.ceiling.amount ?? undefined,
      currency: mandate.ceiling.currency ?? undefined,
      count: mandate.ceiling.count ?? undefined,
      period: mandate.ceiling.period as "day" | "week" | "month" | "lifetime",
    },
    words,
    locale,
  );

function remainingOf(mandate: MeMandate): string | null {
  const parts: string[] = [];
  const { amount, currency, count, period_resets_at } = mandate.remaining;
  if (amount !== null && currency) parts.push(formatMinorUnits(amount, currency, locale));
  if (count !== null) {
    const plural = new Intl.PluralRules(locale).select(count) === "one" ? "one" : "other";
    parts.push(words(`screen.mandate.count.${plural}`, { count }));
  }
  if (parts.length === 0) return null;
  return period_resets_at
    ? words("me.mandate.remaining.resets", { remaining: listOf(parts), time: when(period_resets_at) })
    : words("me.mandate.remaining", { remaining: listOf(parts) });
}

function statusBadge(status: string, text: string): HTMLElement {
  return el("span", { class: "status", "data-status": status }, text);
}

/** Every agent that may act for the person, each with its mandates; standing ones first. */
function renderAgents(mandates: MeMandate[]): void {
  const groups = new Map<string, MeMandate[]>();
  for (const mandate of mandates) {
    const key = `${mandate.merchant.merchant_id}\u0000${mandate.granted_to}`;
    groups.set(key, [...(groups.get(key) ?? []), mandate]);
  }
  const ordered = [...groups.values()].sort((a, b) => Number(b.some(standing)) - Number(a.some(standing)));
  const list = el("ul", { class: "items" });
  for (const group of ordered) {
    const first = group[0]!;
    const agent = agentName(first);
    const merchant = first.merchant.name;
    const live = group.filter(standing);
    const kind = words(`me.agents.kind.${first.granted_to_kind}`);
    const item = el(
      "li",
      { class: "card item", "data-agent": first.granted_to, "data-standing": String(live.length > 0) },
      el("h3", {}, agent),
      el("p", { class: "muted" }, words("me.agents.at", { kind: kind.startsWith("me.") ? first.granted_to_kind : kind, merchant })),
    );
    if (live.length > 0) {
      const stop = words("me.agents.stop", { agent, merchant });
      item.append(
        el(
          "div",
          { class: "actions" },
          button(stop, () => stopAgent(first, live.length), { class: "secondary small", "data-action": "stop-agent" }),
        ),
      );
    }
    const inner = el("ul", { class: "items" });
    for (const mandate of group) inner.append(mandateItem(mandate));
    item.append(inner);
    list.append(item);
  }
  partBody("agents").replaceChildren(mandates.length === 0 ? el("p", {}, words("me.agents.none")) : list);
}

function mandateItem(mandate: MeMandate): HTMLElement {
  const scopes = listOf(mandate.scope_labels);
  const ceiling = ceilingOf(mandate);
  const remaining = standing(mandate) ? remainingOf(mandate) : null;
  const uses = mandate.last_consumptions.map((use) =>
    use.amount !== undefined && use.currency
      ? `${formatMinorUnits(use.amount, use.currency, locale)}, ${when(use.created_at)}`
      : when(use.created_at),
  );
  const item = el(
    "li",
    { class: "card item", "data-mandate": mandate.mandate_id, "data-status": mandate.status, "data-standing": String(standing(mandate)) },
    statusBadge(mandate.status, words(`me.mandate.status.${mandate.status}`)),
    el("p", {}, words("me.mandate.may", { scopes })),
    el("p", {}, words("me.mandate.ceiling", { ceiling: ceiling ?? words("screen.mandate.no_ceiling") })),
    remaining && el("p", {}, remaining),
    el("p", { class: "muted" }, words("me.mandate.until", { time: when(mandate.expires_at) })),
    el("p", { class: "muted" }, uses.length ? words("me.mandate.last", { uses: uses.join("; ") }) : words("me.mandate.never")),
  );
  if (standing(mandate)) {
    const label = words("me.mandate.revoke.label", { scopes, agent: agentName(mandate), merchant: mandate.merchant.name });
    item.append(
      el(
        "div",
        { class: "actions" },
        button(words("me.mandate.revoke"), () => revokeMandate(mandate), { "aria-label": label, "data-action": "revoke" }),
      ),
    );
  }
  return item;
}

function revokeMandate(mandate: MeMandate): Promise<void> {
  const merchant = mandate.merchant.name;
  const scopes = listOf(mandate.scope_labels.map((label) => label.toLocaleLowerCase(locale)));
  const question = {
    title: words("me.mandate.revoke.title"),
    paragraphs: [words("me.mandate.revoke.body", { agent: agentName(mandate), scopes, merchant })],
    yes: words("me.mandate.revoke"),
  };
  return confirmThenAct(question, "agents", async () => {
    await call(ME_ROUTES.revokeMandates, { body: { mandate_id: mandate.mandate_id } });
    return words("me.revoked.done", { merchant });
  });
}

function stopAgent(mandate: MeMandate, count: number): Promise<void> {
  const agent = agentName(mandate);
  const merchant = mandate.merchant.name;
  const question = {
    title: words("me.agents.stop.title", { agent, merchant }),
    paragraphs: [words("me.agents.stop.body", { count, merchant })],
    yes: words("me.agents.stop", { agent, merchant }),
  };
  return confirmThenAct(question, "agents", async () => {
    await call(ME_ROUTES.revokeMandates, { body: { merchant_id: mandate.merchant.merchant_id, granted_to: mandate.granted_to } });
    return words("me.revoked.done", { merchant });
  });
}

/** Each merchant that holds the person, its consent and the way to withdraw it; then the ledger, verified. */
function renderMerchants(merchants: MeMerchant[], ledger: MeLedger, mandates: MeMandate[]): void {
  const list = el("ul", { class: "items" });
  for (const merchant of merchants) {
    const consent = merchant.consents.at(-1);
    const item = el(
      "li",
      { class: "card item", "data-merchant": merchant.merchant_id, "data-consent": merchant.consent_state },
      el("h3", {}, merchant.name),
      el("p", { class: "muted" }, words("me.merchants.since", { time: when(merchant.known_since) })),
    );
    if (consent && merchant.consent_state === "active") {
      item.append(el("p", {}, words("me.merchants.consent.active", { version: consent.version, time: when(consent.retained_until) })));
      const standingThere = mandates.filter((m) => m.merchant.merchant_id === merchant.merchant_id && standing(m)).length;
      item.append(
        el(
          "div",
          { class: "actions" },
          button(words("me.merchants.withdraw", { merchant: merchant.name }), () => withdraw(merchant, standingThere), {
            "data-action": "withdraw",
          }),
        ),
      );
    } else if (consent?.ended_at) {
      item.append(el("p", {}, words("me.merchants.consent.ended", { time: when(consent.ended_at) })));
    }
    list.append(item);
  }
  const verdict = ledger.verification.ok
    ? words("me.ledger.ok", { count: ledger.verification.entries })
    : words("me.ledger.broken", { seq: ledger.verification.breaks[0]?.seq ?? "?" });
  const entries = el("ol", { class: "items ledger" });
  for (const entry of ledger.entries) {
    const kind = words(`me.ledger.kind.${entry.kind}`);
    const detail = entry.purpose ?? (entry.version ? `v${entry.version}` : "");
    entries.append(
      el(
        "li",
        { "data-seq": String(entry.seq) },
        `${when(entry.recorded_at)}: ${kind}, ${entry.merchant.name}${detail ? ` (${detail})` : ""}`,
      ),
    );
  }
  const details = el(
    "details",
    { id: "ledger" },
    el("summary", {}, words("me.ledger.title")),
    el("p", { class: "verified", "data-ok": String(ledger.verification.ok) }, verdict),
    entries,
  );
  partBody("merchants").replaceChildren(merchants.length === 0 ? el("p", {}, words("me.merchants.none")) : list, details);
}

function withdraw(merchant: MeMerchant, standingThere: number): Promise<void> {
  const paragraphs = [words("me.merchants.withdraw.body", { merchant: merchant.name })];
  if (standingThere > 0) paragraphs.push(words("me.merchants.withdraw.mandates", { count: standingThere }));
  const question = {
    title: words("me.merchants.withdraw.title", { merchant: merchant.name }),
    paragraphs,
    yes: words("me.merchants.withdraw", { merchant: merchant.name }),
  };
  return confirmThenAct(question, "merchants", async () => {
    await call(ME_ROUTES.withdrawConsent, { body: { merchant_id: merchant.merchant_id, confirm: true } });
    return words("me.merchants.withdraw.done", { merchant: merchant.name });
  });
}

/** What each merchant received: which claims, when, for what; the values never (the service keeps none). */
function renderDisclosures(disclosures: MeDisclosure[]): void {
  if (disclosures.length === 0) {
    partBody("disclosures").replaceChildren(el("p", {}, words("me.disclosures.none")));
    return;
  }
  const list = el("ul", { class: "items" });
  for (const disclosure of disclosures) {
    const shared = disclosure.claims.filter((claim) => claim.status === "disclosed").map((claim) => claim.key);
    const withheld = disclosure.claims.filter((claim) => claim.status !== "disclosed").map((claim) => claim.key);
    list.append(
      el(
        "li",
        { class: "card item", "data-disclosure": String(disclosure.disclosure_seq) },
        el(
          "h3",
          {},
          words("me.disclosures.item", {
            merchant: disclosure.merchant.name,
            time: when(disclosure.disclosed_at),
            purpose: disclosure.purpose,
          }),
        ),
        shared.length > 0 && el("p", {}, words("me.disclosures.shared", { claims: listOf(shared) })),
        withheld.length > 0 && el("p", { class: "muted" }, words("me.disclosures.withheld", { claims: listOf(withheld) })),
      ),
    );
  }
  partBody("disclosures").replaceChildren(list, el("p", { class: "muted" }, words("me.disclosures.values")));
}

const ACTIONS = new Set(["login", "payment", "sign", "enroll"]);

/** The person's acts, each approved one with its receipt to verify. */
function renderReceipts(acts: MeAct[]): void {
  if (acts.length === 0) {
    partBody("receipts").replaceChildren(el("p", {}, words("me.receipts.none")));
    return;
  }
  const list = el("ul", { class: "items" });
  for (const done of acts) {
    const action = done.action.toLowerCase().replace(/^action_/, "");
    const kind = done.approved ? "approved" : "refused";
    list.append(
      el(
        "li",
        { class: "card item", "data-act": done.transaction_id },
        el("h3", {}, `${words(`me.receipts.action.${ACTIONS.has(action) ? action : "other"}`)}, ${done.merchant.name}`),
        statusBadge(kind, words(`me.receipts.${kind}`)),
        el("p", { class: "muted" }, when(done.created_at)),
        done.amount && el("p", {}, formatMinorUnits(done.amount.minor, done.amount.currency, locale)),
        done.receipt &&
          el(
            "p",
            {},
            el(
              "a",
              { href: done.receipt.verify_url, "data-receipt": done.receipt.code },
              words("me.receipts.verify", { code: done.receipt.code }),
            ),
          ),
      ),
    );
  }
  partBody("receipts").replaceChildren(list);
}

/** The person's devices: rename one, remove one. */
function renderDevices(devices: MeDevice[]): void {
  if (devices.length === 0) {
    partBody("devices").replaceChildren(el("p", {}, words("me.devices.none")));
    return;
  }
  const list = el("ul", { class: "items" });
  for (const device of devices) {
    const name = device.name ?? words("me.devices.unnamed");
    const item = el(
      "li",
      { class: "card item", "data-device": device.device_id, "data-standing": String(device.revoked_at === null) },
      el("h3", {}, name),
      el("p", { class: "muted" }, words("me.devices.added", { time: when(device.created_at) })),
      device.revoked_at && el("p", {}, words("me.devices.revoked", { time: when(device.revoked_at) })),
    );
    if (device.revoked_at === null) {
      const actions = el("div", { class: "actions" });
      const rename = button(
        words("me.devices.rename"),
        () => {
          rename.hidden = true;
          const input = el("input", { type: "text", maxlength: "64", value: device.name ?? "" });
          const form = el(
            "form",
            { class: "rename" },
            el("label", {}, words("me.devices.rename.label", { device: name }), input),
            el("button", { type: "submit", class: "primary small" }, words("me.devices.save")),
          );
          form.addEventListener("submit", (event) => {
            event.preventDefault();
            void act("devices", async () => {
              const renamed = await call<MeDeviceRenamed>(ME_ROUTES.renameDevice, {
                body: { device_id: device.device_id, name: input.value.trim() },
              });
              return words("me.devices.renamed", { device: renamed.device.name ?? words("me.devices.unnamed") });
            });
          });
          item.append(form);
          input.focus();
        },
        { "data-action": "rename-device" },
      );
      actions.append(
        rename,
        button(
          words("me.devices.revoke"),
          () =>
            confirmThenAct(
              {
                title: words("me.devices.revoke.title", { device: name }),
                paragraphs: [words("me.devices.revoke.body")],
                yes: words("me.devices.revoke"),
              },
              "devices",
              async () => {
                await call(ME_ROUTES.revokeDevice, { body: { device_id: device.device_id } });
                return words("me.devices.revoked", { time: when(new Date().toISOString()) });
              },
            ),
          { "data-action": "remove-device" },
        ),
      );
      item.append(actions);
    }
    list.append(item);
  }
  partBody("devices").replaceChildren(list);
}

/** The export: generated on request, then downloaded once by the browser itself (an attachment). */
async function exportData(): Promise<void> {
  try {
    const created = await call<MeExportCreated>(ME_ROUTES.exports, { body: {} });
    const anchor = el("a", { href: `${BASE}${ME_ROUTES.exports}/${created.export_id}`, download: "my-data.json", hidden: "" });
    body.append(anchor);
    anchor.click();
    anchor.remove();
    notify(words("me.export.done"));
  } catch (error) {
    notify(failure(error), "error");
  }
}

/** Erasure at each merchant whose consent stands, or everywhere: said first, then a fresh presence proof (D-470). */
function renderErase(merchants: MeMerchant[]): void {
  const held = merchants.filter((merchant) => merchant.consent_state === "active");
  const buttons = held.map((merchant) =>
    button(words("me.erase.one", { merchant: merchant.name }), () => erase(held, merchant), {
      "data-action": "erase",
      "data-merchant": merchant.merchant_id,
    }),
  );
  if (held.length > 1) buttons.push(button(words("me.erase.all"), () => erase(held, null), { "data-action": "erase-all" }));
  $("erase-actions").replaceChildren(...buttons);
}

/** What an erasure erases, with its fresh proof: POST /me/erase's body. */
type EraseBody = ({ merchant_id: string } | { all: true }) & { confirm: true; presence_session_id: string };

async function erase(held: MeMerchant[], merchant: MeMerchant | null): Promise<void> {
  const title = merchant ? words("me.erase.title.one", { merchant: merchant.name }) : words("me.erase.title.all");
  const at = merchant ?? held[0]!;
  await confirmThenAct(
    { title, paragraphs: [words("me.erase.lead"), words("me.erase.body")], yes: words("me.erase.prove") },
    "data",
    async () => {
      const screen = await call<MeScreen>(ME_ROUTES.presence, { body: { merchant_id: at.merchant_id } });
      const target = merchant ? { merchant_id: merchant.merchant_id } : { all: true as const };
      const request: EraseBody = { ...target, confirm: true, presence_session_id: screen.session_id };
      const erased = await throughScreen<MeErased>(
        screen,
        async () => {
          try {
            return await call<MeErased>(ME_ROUTES.erase, { body: request });
          } catch (error) {
            if (error instanceof Refusal && error.code === "PRESENCE_PROOF_INVALID" && error.reason === "pending") return "pending";
            throw error;
          }
        },
        () => notify(words("me.erase.opened")),
        // The screen in this tab (D-611): what was confirmed is kept, and erased when the person comes back.
        () => sessionStorage.setItem(ERASE_KEY, JSON.stringify({ request, merchant: merchant?.name ?? null })),
      );
      return erasedWords(erased, merchant?.name ?? null);
    },
  );
}

/** What the page says once erased; erased everywhere, the person is signed out (their session ended with it). */
function erasedWords(erased: MeErased, merchant: string | null): string {
  if (erased.identity_erased) {
    sessionStorage.removeItem(CSRF_KEY);
    showSignedOut(words("me.erase.done.all"));
    throw new Refusal(401, "PERSON_SESSION_REQUIRED");
  }
  return merchant ? words("me.erase.done.one", { merchant }) : words("me.erase.done.all");
}

/**
 * An erasure confirmed before the proof's screen opened in this tab (D-611), once the person is
 * back: sent once with the proof it kept. A proof not finished erases nothing, and the page says
 * the check ended before it was finished.
 */
async function finishErase(kept: { request: EraseBody; merchant: string | null }): Promise<void> {
  await act(
    "data",
    async () => erasedWords(await call<MeErased>(ME_ROUTES.erase, { body: kept.request }), kept.merchant),
    (error) => (error instanceof Refusal && error.code === "PRESENCE_PROOF_INVALID" ? words("me.signin.expired") : failure(error)),
  );
}

async function signOut(): Promise<void> {
  try {
    await call(ME_ROUTES.signOut, { body: {} });
  } catch {
    // Signed out either way: the cookie's session ends by itself.
  }
  sessionStorage.removeItem(CSRF_KEY);
  showSignedOut(words("me.signedout"));
}

async function main(): Promise<void> {
  for (const method of signInMethods) {
    document.querySelector(`[data-method="${method.id}"]`)?.addEventListener("click", () => void signIn(method));
  }
  $("sign-out").addEventListener("click", () => void signOut());
  $("export").addEventListener("click", () => void exportData());
  const pending = sessionStorage.getItem(PENDING_KEY);
  sessionStorage.removeItem(PENDING_KEY);
  if (pending) {
    const signedIn = await finish(pending).catch(() => "pending" as const);
    if (signedIn !== "pending") return signedInAs(signedIn);
  }
  const erasing = sessionStorage.getItem(ERASE_KEY);
  sessionStorage.removeItem(ERASE_KEY);
  try {
    await showSignedIn(await call<MeSession>(ME_ROUTES.session));
  } catch (error) {
    if (!(error instanceof Refusal && error.code.startsWith("PERSON_SESSION"))) showSignedOut(failure(error));
    return;
  }
  if (erasing) await finishErase(JSON.parse(erasing));
}

void main();
