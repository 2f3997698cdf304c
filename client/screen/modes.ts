/**
 * What the hosted screen tells and asks the person for each session action: the one extension
 * point of the screen. A mode words the introduction (title, lead, the terms shown), says whether a
 * consent must be accepted before the camera opens, and builds the body `POST /complete` takes from
 * the descriptor. Everything else (theme, devices, quality gates, recording, outcome, cancel) is the
 * same for every mode, in client/pages/session.ts. A new kind of session adds one entry to
 * `screenModes` (and its words to the catalogues); a boot whose action has no mode is shown as an
 * error rather than guessed at.
 */
import type { PresenceDescriptor } from "../../shared/engine/descriptor";

/** What `POST /boot` answers (docs/functions.md#hosted-capture), as the screen reads it. */
export interface ScreenBoot {
  session_id: string;
  action: string;
  display_name: string;
  external_txn_ref: string | null;
  amount_cents: number | null;
  currency: string | null;
  expires_at: string;
  locale: string;
  consent: { version: string; retention_days: number } | null;
  capture_nonce: string;
  screen_token: string;
  theme: { customized: boolean; theme: Record<string, string | number> };
}

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

export const screenModes: Record<string, ScreenMode> = {
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
};
