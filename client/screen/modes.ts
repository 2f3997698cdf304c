/**
 * What the hosted screen tells and asks the person for each session action: the one extension
 * point of the screen. A mode words the introduction (title, lead, the terms shown), says whether a
 * consent must be accepted before the camera opens, and builds the body `POST /complete` takes from
 * the descriptor. Everything else (theme, devices, quality gates, recording, outcome, cancel) is the
 * same for every mode, in client/pages/session.ts. A new kind of session adds one entry to
 * `screenModes` (and its words to the catalogues); a boot whose action has no mode is shown as an
 * error rather than guessed at.
 */
import type { ScreenAction, ScreenBoot } from "../../shared/contracts/hosted-screen";
import type { PresenceDescriptor } from "../../shared/engine/descriptor";

/** The page's words: a catalogue key (`screen.…`) with its `{placeholders}` filled. */
export type Words = (key: string, params?: Record<string, string | number>) => string;

/** One line of the terms the person is asked to confirm. */
export interface Term {
  label: string;
  value: string;
}

export interface ScreenMode {
  /** The introduction's heading. */
  title(boot: ScreenBoot, words: Words): string;
  /** What is asked, in a sentence. */
  lead(boot: ScreenBoot, words: Words): string;
  /** The terms shown under the lead (the amount of a payment, the reference); may be empty. */
  terms(boot: ScreenBoot, words: Words, locale: string): Term[];
  /** The consent the person must accept before the camera opens, worded; null when none. */
  consent(boot: ScreenBoot, words: Words): string | null;
  /** The body of `POST /complete` for this capture (the consent, when asked, was accepted). */
  completion(boot: ScreenBoot, descriptor: PresenceDescriptor): Record<string, unknown>;
}

/**
 * An amount in minor units as the person's locale writes it in `currency` (ISO 4217): the
 * currency's own number of decimals, from Intl.
 *
 * @example formatMinorUnits(1299, "EUR", "pt-BR") // "€ 12,99"
 */
export function formatMinorUnits(amountMinor: number, currency: string, locale: string): string {
  const format = new Intl.NumberFormat(locale, { style: "currency", currency });
  const decimals = format.resolvedOptions().maximumFractionDigits ?? 2;
  return format.format(amountMinor / 10 ** decimals);
}

const capture = (boot: ScreenBoot, descriptor: PresenceDescriptor) => ({ capture_nonce: boot.capture_nonce, face_template: descriptor });

const reference = (boot: ScreenBoot, words: Words): Term[] =>
  boot.external_txn_ref ? [{ label: words("screen.detail.reference"), value: boot.external_txn_ref }] : [];

/** Identify-then-act modes share everything but their words. */
function identifyMode(name: "login" | "authorize" | "sign", terms: ScreenMode["terms"]): ScreenMode {
  return {
    title: (boot, words) => words(`screen.mode.${name}.title`, { merchant: boot.display_name }),
    lead: (boot, words) => words(`screen.mode.${name}.lead`, { merchant: boot.display_name }),
    terms,
    consent: () => null,
    completion: capture,
  };
}

/**
 * The screen of each action the page can complete. Every action the server can create a session
 * with is the contract's `screenActions`; tests/unit/client/screen.test.ts holds this table to it,
 * with the actions that have no screen yet named there.
 */
const modes = {
  enroll: {
    title: (boot, words) => words("screen.mode.enroll.title", { merchant: boot.display_name }),
    lead: (boot, words) => words("screen.mode.enroll.lead", { merchant: boot.display_name }),
    terms: () => [],
    consent: (boot, words) =>
      boot.consent ? words("screen.consent.label", { merchant: boot.display_name, days: boot.consent.retention_days }) : null,
    completion: (boot, descriptor) => ({ ...capture(boot, descriptor), consent: { ...boot.consent, accepted: true } }),
  },
  login: identifyMode("login", () => []),
  authorize: identifyMode("authorize", (boot, words, locale) => [
    ...(boot.amount_cents !== null && boot.currency
      ? [{ label: words("screen.detail.amount"), value: formatMinorUnits(boot.amount_cents, boot.currency, locale) }]
      : []),
    ...reference(boot, words),
  ]),
  sign: identifyMode("sign", reference),
  verify: {
    // An agent verification card: who asks (an agent names itself, so its name is shown as unverified), why, and what proving presence does.
    title: (boot, words) =>
      boot.card?.requested_by === "agent"
        ? words("screen.mode.verify.title", { agent: boot.card.agent_name ?? words("screen.mode.verify.unnamed") })
        : words("screen.mode.verify.title_owner", { merchant: boot.display_name }),
    lead: (boot, words) => words("screen.mode.verify.lead", { merchant: boot.display_name }),
    terms: (boot, words) => [
      ...(boot.card?.requested_by === "agent"
        ? [
            {
              label: words("screen.detail.asked_by"),
              value: words("screen.detail.agent_unverified", { agent: boot.card.agent_name ?? words("screen.mode.verify.unnamed") }),
            },
          ]
        : []),
      ...(boot.card?.purpose ? [{ label: words("screen.detail.purpose"), value: boot.card.purpose }] : []),
    ],
    consent: () => null,
    completion: capture,
  },
} satisfies Partial<Record<ScreenAction, ScreenMode>>;
export const screenModes: Record<keyof typeof modes, ScreenMode> = modes;

/** The mode of a booted session's action, or undefined when the page has none (the screen shows an error rather than guess). */
export function modeOf(action: string): ScreenMode | undefined {
  return (screenModes as Partial<Record<string, ScreenMode>>)[action];
}
