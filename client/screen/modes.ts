/**
 * What the hosted screen tells and asks the person for each session action: the one extension
 * point of the screen. A mode words the introduction (title, lead, the terms shown), says whether a
 * consent must be accepted before the camera opens, and builds the body `POST /complete` takes from
 * the descriptor. Everything else (theme, devices, quality gates, recording, outcome, cancel) is the
 * same for every mode, in client/pages/session.ts. A new kind of session adds one entry to
 * `screenModes` (and its words to the catalogues); a boot whose action has no mode is shown as an
 * error rather than guessed at.
 */
import type { ScreenAction, ScreenBoot, ScreenMandateTerms } from "../../shared/contracts/hosted-screen";
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

/** An enrolment (the function API's `enroll`, the /v1 `claim`: the same act, so the same words): the consent, then the capture. */
const enrollMode: ScreenMode = {
  title: (boot, words) => words("screen.mode.enroll.title", { merchant: boot.display_name }),
  lead: (boot, words) => words("screen.mode.enroll.lead", { merchant: boot.display_name }),
  terms: () => [],
  consent: (boot, words) =>
    boot.consent ? words("screen.consent.label", { merchant: boot.display_name, days: boot.consent.retention_days }) : null,
  completion: (boot, descriptor) => ({ ...capture(boot, descriptor), consent: { ...boot.consent, accepted: true } }),
};

/** A /v1 mode that asks one capture of the person the session is for, worded by its own keys. */
function personMode(name: "recognise" | "attribute" | "mandate", terms: ScreenMode["terms"], title?: ScreenMode["title"]): ScreenMode {
  return {
    title: title ?? ((boot, words) => words(`screen.mode.${name}.title`, { merchant: boot.display_name })),
    lead: (boot, words) => words(`screen.mode.${name}.lead`, { merchant: boot.display_name, agent: agentOf(boot, words, true) }),
    terms,
    consent: () => null,
    completion: capture,
  };
}

/**
 * The agent a mandate session would empower: the name the merchant gave it, else its identifier, else
 * "an agent", in lower case where the words go inside a sentence (`inline`: the title and the lead).
 */
function agentOf(boot: ScreenBoot, words: Words, inline = false): string {
  const mandate = boot.mode?.mandate;
  return mandate?.agent_display_name ?? mandate?.granted_to ?? words(inline ? "screen.mode.unnamed_inline" : "screen.mode.verify.unnamed");
}

/** Items in the locale's own list form ("a, b and c"). */
const listOf = (items: string[], locale: string) => new Intl.ListFormat(locale, { type: "conjunction" }).format(items);

/**
 * A mandate's ceiling in words: the amount in the locale's money format and the count of acts
 * (plural by the locale's rules), per period ("R$ 1.500,00 e 5 vezes por mês"); null without one.
 */
export function ceilingWords(ceiling: ScreenMandateTerms["ceiling"], words: Words, locale: string): string | null {
  if (!ceiling) return null;
  const parts: string[] = [];
  if (ceiling.amount !== undefined && ceiling.currency) parts.push(formatMinorUnits(ceiling.amount, ceiling.currency, locale));
  if (ceiling.count !== undefined) {
    const plural = new Intl.PluralRules(locale).select(ceiling.count) === "one" ? "one" : "other";
    parts.push(words(`screen.mandate.count.${plural}`, { count: ceiling.count }));
  }
  if (parts.length === 0) return null;
  return words(`screen.mandate.period.${ceiling.period}`, { limit: listOf(parts, locale) });
}

/** An instant as the locale writes a date and time, in the person's time zone. */
export function instantWords(iso: string, locale: string): string {
  return new Intl.DateTimeFormat(locale, { dateStyle: "long", timeStyle: "short" }).format(new Date(iso));
}

/** A mandate's terms in plain words: the agent, what it may do, where, up to what, until when. */
function mandateTerms(boot: ScreenBoot, words: Words, locale: string): Term[] {
  const mandate = boot.mode?.mandate;
  if (!mandate) return [];
  const label = (scope: string) => {
    const key = `scope.${scope}.label`;
    const worded = words(key);
    return worded === key ? scope : worded;
  };
  const terms: Term[] = [
    { label: words("screen.detail.agent"), value: agentOf(boot, words) },
    { label: words("screen.detail.scopes"), value: listOf(mandate.scope.map(label), locale) },
  ];
  const constraints = mandate.constraints ?? {};
  for (const kind of ["merchant", "category", "country"] as const) {
    const allowed = constraints[`${kind}_allowlist`];
    if (allowed?.length) terms.push({ label: words(`screen.detail.only_${kind}`), value: listOf(allowed, locale) });
  }
  const ceiling = ceilingWords(mandate.ceiling, words, locale);
  terms.push({ label: words("screen.detail.ceiling"), value: ceiling ?? words("screen.mandate.no_ceiling") });
  terms.push({ label: words("screen.detail.until"), value: instantWords(mandate.until, locale) });
  if (mandate.step_up_of) terms.push({ label: words("screen.detail.step_up"), value: words("screen.mandate.step_up") });
  return terms;
}

/**
 * The screen of each action: every action the server can create a session with (the contract's
 * `screenActions`) has one, which the type checks here and tests/unit/client/screen.test.ts at run time.
 */
const modes = {
  enroll: enrollMode,
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
  // The /v1 modes (docs/resource-api.md#sessions): what the merchant learns is said in the lead.
  claim: enrollMode,
  recognise: personMode("recognise", () => []),
  attribute: personMode("attribute", (boot, words) => {
    const attribute = boot.mode?.attribute;
    if (!attribute) return [];
    const key = `screen.attribute.${attribute}`;
    const worded = words(key);
    return [{ label: words("screen.detail.question"), value: worded === key ? attribute : worded }];
  }),
  mandate: personMode("mandate", mandateTerms, (boot, words) => words("screen.mode.mandate.title", { agent: agentOf(boot, words, true) })),
} satisfies Record<ScreenAction, ScreenMode>;
export const screenModes: Record<ScreenAction, ScreenMode> = modes;

/** The mode of a booted session's action, or undefined when the page has none (the screen shows an error rather than guess). */
export function modeOf(action: string): ScreenMode | undefined {
  return (screenModes as Partial<Record<string, ScreenMode>>)[action];
}
