/**
 * The hosted screen's pure parts (client/screen/): what each session action tells and asks, the
 * theme's colours for each scheme, and the paced reading's cues.
 */
import type * as v from "valibot";
import { describe, expect, expectTypeOf, it } from "vitest";
import { ceilingWords, formatMinorUnits, instantWords, modeOf, type ScreenMode, screenModes } from "../../../client/screen/modes";
import { cueAt, pacedCues } from "../../../client/screen/paced";
import {
  capturePresenceOf,
  type ScreenAction,
  type ScreenBoot,
  type ScreenMandateTerms,
  type ScreenModeTerms,
  type SessionEnded,
  screenActions,
} from "../../../shared/contracts/hosted-screen";
import { LIGHT_PALETTE } from "../../../shared/engine/light";
import { challengeSchedule } from "../../../shared/engine/schedule";
import { type Locale, locales, messagesOf } from "../../../shared/kernel/i18n";
import { accentTokens, colours, contrastOf, contrastOnSurface, inkOn, ownAsset, panelOf, shape } from "../../../shared/lib/screen-theme";
import type { bootAnswerSchema, sessionEndedSchema } from "../../../shared/sessions/answers";
import { defaultTheme } from "../../../shared/themes/theme";

const words = (key: string, params: Record<string, string | number> = {}) => `${key}${JSON.stringify(params)}`;
const boot = (extra: Partial<ScreenBoot> = {}): ScreenBoot => ({
  session_id: "hs_1",
  merchant_id: "00000000-0000-4000-8000-000000000001",
  environment: "test",
  action: "login",
  display_name: "Acme",
  external_txn_ref: null,
  amount_cents: null,
  currency: null,
  expires_at: "2026-11-24T10:00:00.000Z",
  locale: "en",
  locales: ["en"],
  consent: null,
  card: null,
  capture_nonce: "hcn_abcdefgh",
  presence: "face_voice",
  passkey: null,
  opener_origin: null,
  screen_token: "hsc_x",
  theme: { customized: false, theme: {} },
  ...extra,
});
const descriptor = { version: 1 } as never;

// Compile time: every action of the contract (function API, agent verification cards, the owner's sign-in, /v1 modes) has a mode.
screenModes satisfies Record<ScreenAction, ScreenMode>;

/**
 * The page's words as the service embeds them (functions/hosted-capture/page.ts): a key a mode
 * asks for that no catalogue has would show as the key itself, so this one fails instead.
 */
const catalogued = (language: Locale) => {
  const messages = { ...messagesOf(language, "screen."), ...messagesOf(language, "scope.") };
  return (key: string, params: Record<string, string | number> = {}) => {
    expect(messages[key], `${language}: ${key}`).toBeDefined();
    return messages[key]!.replace(/\{(\w+)\}/g, (_, name: string) => String(params[name] ?? `{${name}}`));
  };
};

const mandate: ScreenMandateTerms = {
  granted_to: "agent_travel_7",
  agent_display_name: "Travel helper",
  scope: ["purchase", "booking"],
  constraints: { country_allowlist: ["BR", "PT"] },
  ceiling: { amount: 150_000, currency: "BRL", count: 5, period: "month" },
  until: "2027-03-01T15:00:00.000Z",
};
const modeTerms = (extra: Partial<ScreenModeTerms>): ScreenModeTerms => ({
  name: "recognise",
  attribute: null,
  mandate: null,
  branding: null,
  locale: null,
  return_url: "https://shop.example/back",
  cancel_url: "https://shop.example/back",
  ...extra,
});

describe("the wire contract", () => {
  it("is what the service's document describes: the boot's and the outcome's shapes fit their answer schemas", () => {
    type Fits<Answer, Schema extends v.GenericSchema> = Answer extends v.InferOutput<Schema> ? true : false;
    expectTypeOf<Fits<ScreenBoot, typeof bootAnswerSchema>>().toEqualTypeOf<true>();
    expectTypeOf<Fits<SessionEnded, typeof sessionEndedSchema>>().toEqualTypeOf<true>();
  });
});

describe("screen modes", () => {
  it("has a mode for every action the server creates sessions with (function API, agent verification cards, the owner's sign-in, /v1), with no gap", () => {
    expect(Object.keys(screenModes).sort()).toEqual([...screenActions].sort());
    for (const action of screenActions) expect(modeOf(action), action).toBeDefined();
    expect(modeOf("unheard_of"), "an action from a newer service: the page shows an error").toBeUndefined();
  });

  it("every mode's words exist in every locale the page speaks", () => {
    const full = boot({
      external_txn_ref: "order-1",
      amount_cents: 100,
      currency: "EUR",
      consent: { version: "hosted-capture-1", retention_days: 365 },
      card: { verification_id: "av_1", purpose: "p", agent_name: "a", requested_by: "agent" },
      mode: modeTerms({ attribute: "document_verified", mandate: { ...mandate, step_up_of: "mdt_1" } }),
    });
    for (const language of locales) {
      for (const [action, mode] of Object.entries(screenModes)) {
        const booted = { ...full, action: action as ScreenAction };
        const said = [mode.title(booted, catalogued(language)), mode.lead(booted, catalogued(language))];
        for (const term of mode.terms(booted, catalogued(language), language)) said.push(term.label, term.value);
        said.push(mode.consent(booted, catalogued(language)) ?? "");
        for (const text of said) expect(text, `${language} ${action}`).not.toMatch(/[{}]|screen\./);
      }
    }
  });

  it("asks the face only for a mandate's step-up (D-428), and its words exist beside the voice's in every locale", () => {
    expect(capturePresenceOf("mandate", { step_up_of: "mdt_1" })).toBe("face");
    expect(capturePresenceOf("mandate", {})).toBe("face_voice");
    expect(capturePresenceOf("mandate", null)).toBe("face_voice");
    expect(capturePresenceOf("login", { step_up_of: "mdt_1" })).toBe("face_voice");
    // The page words a face-only capture by `screen.face.<key>` where it has one (client/pages/session.ts): each stands for a voice's key.
    for (const language of locales) {
      const messages = messagesOf(language, "screen.");
      const face = Object.keys(messages).filter((key) => key.startsWith("screen.face."));
      expect(face.length, language).toBe(9);
      for (const key of face) expect(messages[key.replace("screen.face.", "screen.")], `${language}: ${key}`).toBeDefined();
      expect(messages["screen.face.why.body"], language).toContain("{seconds}");
    }
  });

  it("claim: the enrolment's screen (the consent asked and sent back accepted, as offered)", () => {
    const consent = { version: "hosted-capture-1", retention_days: 365 };
    const claim = boot({ action: "claim", consent, mode: modeTerms({ name: "claim" }) });
    expect(screenModes.claim).toBe(screenModes.enroll);
    expect(screenModes.claim.consent(claim, words)).toBe('screen.consent.label{"merchant":"Acme","days":365}');
    expect(screenModes.claim.completion(claim, descriptor)).toEqual({
      capture_nonce: "hcn_abcdefgh",
      face_template: descriptor,
      consent: { ...consent, accepted: true },
    });
  });

  it("recognise and attribute: one capture of the session's person, no consent; attribute asks its question in words", () => {
    const recognise = boot({ action: "recognise", mode: modeTerms({}) });
    expect(screenModes.recognise.title(recognise, words)).toBe('screen.mode.recognise.title{"merchant":"Acme"}');
    expect(screenModes.recognise.terms(recognise, words, "en")).toEqual([]);
    const attribute = boot({ action: "attribute", mode: modeTerms({ name: "attribute", attribute: "document_verified" }) });
    expect(screenModes.attribute.terms(attribute, catalogued("es"), "es")).toEqual([
      { label: "Pregunta", value: "¿Consta en tu registro un documento de identidad válido y verificado?" },
    ]);
    for (const booted of [recognise, attribute]) {
      const mode = modeOf(booted.action)!;
      expect(mode.consent(booted, words)).toBeNull();
      expect(mode.completion(booted, descriptor)).toEqual({ capture_nonce: "hcn_abcdefgh", face_template: descriptor });
    }
  });

  it("mandate: the terms in plain words, in the session's locale: the agent, its scopes, where, the ceiling in the locale's money, until when", () => {
    const granting = boot({ action: "mandate", locale: "pt-BR", mode: modeTerms({ name: "mandate", mandate }) });
    const pt = catalogued("pt-BR");
    expect(screenModes.mandate.title(granting, pt)).toBe("Permita que Travel helper aja por você");
    const terms = screenModes.mandate.terms(granting, pt, "pt-BR");
    const until = new Intl.DateTimeFormat("pt-BR", { dateStyle: "long", timeStyle: "short" }).format(new Date(mandate.until));
    expect(terms.map((term) => ({ ...term, value: term.value.replace(/\s/g, " ") }))).toEqual([
      { label: "Agente", value: "Travel helper" },
      { label: "Pode", value: "Fazer compras e Fazer reservas" },
      { label: "Só em países", value: "BR e PT" },
      { label: "Limite", value: "R$ 1.500,00 e 5 ações por mês" },
      { label: "Até", value: until.replace(/\s/g, " ") },
    ]);
    expect(until).toMatch(/2027/);
    expect(screenModes.mandate.completion(granting, descriptor)).toEqual({ capture_nonce: "hcn_abcdefgh", face_template: descriptor });
    const unnamed = boot({
      action: "mandate",
      mode: modeTerms({ name: "mandate", mandate: { ...mandate, agent_display_name: undefined } }),
    });
    expect(screenModes.mandate.title(unnamed, catalogued("en"))).toBe("Allow agent_travel_7 to act for you");
    // neither a name nor an identifier (the contract requires granted_to; this is the fallback the screen
    // would show): "an agent" inside the sentences, "An agent" where it stands alone
    const anonymous = boot({
      action: "mandate",
      mode: modeTerms({
        name: "mandate",
        mandate: { ...mandate, agent_display_name: undefined, granted_to: undefined } as unknown as ScreenMandateTerms,
      }),
    });
    expect(screenModes.mandate.title(anonymous, catalogued("en"))).toBe("Allow an agent to act for you");
    expect(screenModes.mandate.title(anonymous, catalogued("pt-BR"))).toBe("Permita que um agente aja por você");
    expect(screenModes.mandate.lead(anonymous, catalogued("es"))).toMatch(/ un agente /);
    expect(screenModes.mandate.terms(anonymous, catalogued("en"), "en")[0]).toMatchObject({ value: "An agent" });
  });

  it("words a ceiling by what it limits and its period, with the locale's plural; none is said as none", () => {
    const en = catalogued("en");
    expect(ceilingWords({ count: 1, period: "day" }, en, "en")).toBe("1 action per day");
    expect(ceilingWords({ count: 3, period: "lifetime" }, en, "en")).toBe("3 actions in total");
    expect(ceilingWords({ amount: 2_500, currency: "USD", period: "week" }, en, "en")).toBe("$25.00 per week");
    expect(ceilingWords({ amount: 999, currency: "EUR", period: "month" }, catalogued("es"), "es")?.replace(/\s/g, " ")).toBe(
      "9,99 € al mes",
    );
    expect(ceilingWords(undefined, en, "en")).toBeNull();
    const granting = boot({ action: "mandate", mode: modeTerms({ name: "mandate", mandate: { ...mandate, ceiling: undefined } }) });
    expect(screenModes.mandate.terms(granting, en, "en")).toContainEqual({ label: "Limit", value: "No amount or number limit" });
    expect(instantWords("2027-03-01T15:00:00.000Z", "en")).toMatch(/2027/);
  });

  it("enroll: asks the consent and sends it back accepted, as offered", () => {
    const consent = { version: "hosted-capture-1", retention_days: 365 };
    const enroll = screenModes.enroll!;
    expect(enroll.consent(boot({ action: "enroll", consent }), words)).toBe('screen.consent.label{"merchant":"Acme","days":365}');
    expect(enroll.completion(boot({ action: "enroll", consent }), descriptor)).toEqual({
      capture_nonce: "hcn_abcdefgh",
      face_template: descriptor,
      consent: { ...consent, accepted: true },
    });
  });

  it("authorize: shows the amount in the person's locale and the reference; the others ask no consent", () => {
    const terms = screenModes.authorize!.terms(
      boot({ amount_cents: 129_990, currency: "BRL", external_txn_ref: "order-1044" }),
      words,
      "pt-BR",
    );
    expect(terms).toEqual([
      { label: "screen.detail.amount{}", value: formatMinorUnits(129_990, "BRL", "pt-BR") },
      { label: "screen.detail.reference{}", value: "order-1044" },
    ]);
    expect(terms[0]!.value.replace(/\s/g, " ")).toBe("R$ 1.299,90");
    for (const action of ["login", "authorize", "sign"] as const) {
      expect(screenModes[action]!.consent(boot({ action }), words)).toBeNull();
      expect(screenModes[action]!.completion(boot({ action }), descriptor)).toEqual({
        capture_nonce: "hcn_abcdefgh",
        face_template: descriptor,
      });
    }
  });

  it("verify (an agent verification card): names who asks, an agent as unverified, and the purpose; asks no consent", () => {
    const verify = screenModes.verify!;
    const card = { verification_id: "av_1", purpose: "Confirm the booking", agent_name: "Travel helper", requested_by: "agent" as const };
    const agentCard = boot({ action: "verify", card });
    expect(verify.title(agentCard, words)).toBe('screen.mode.verify.title{"agent":"Travel helper"}');
    expect(verify.terms(agentCard, words, "en")).toEqual([
      { label: "screen.detail.asked_by{}", value: 'screen.detail.agent_unverified{"agent":"Travel helper"}' },
      { label: "screen.detail.purpose{}", value: "Confirm the booking" },
    ]);
    const unnamed = boot({ action: "verify", card: { ...card, agent_name: null, purpose: null } });
    expect(verify.title(unnamed, words)).toBe('screen.mode.verify.title{"agent":"screen.mode.verify.unnamed{}"}');
    expect(verify.terms(unnamed, words, "en")).toHaveLength(1);
    const ownerCard = boot({ action: "verify", card: { ...card, agent_name: null, requested_by: "owner" } });
    expect(verify.title(ownerCard, words)).toBe('screen.mode.verify.title_owner{"merchant":"Acme"}');
    expect(verify.terms(ownerCard, words, "en")).toEqual([{ label: "screen.detail.purpose{}", value: "Confirm the booking" }]);
    expect(verify.consent(ownerCard, words)).toBeNull();
    expect(verify.completion(ownerCard, descriptor)).toEqual({ capture_nonce: "hcn_abcdefgh", face_template: descriptor });
  });

  it("writes minor units with the currency's own decimals", () => {
    expect(formatMinorUnits(1299, "EUR", "en")).toBe("€12.99");
    expect(formatMinorUnits(1299, "JPY", "en")).toBe("¥1,299");
    expect(formatMinorUnits(1299, "BHD", "en").replace(/\s/g, " ")).toBe("BHD 1.299");
  });
});

describe("the theme on the screen", () => {
  const light = defaultTheme("capture", "https://service.example/assets");

  it("uses a theme's colours as drawn for its own mode", () => {
    expect(colours(light, "light")).toMatchObject({
      "--primary": "212 78% 15%",
      "--background": "0 0% 97%",
      "--foreground": "212 78% 15%",
    });
  });

  it("mirrors a light theme for a dark device: background and text swap lightness, a dark primary turns light", () => {
    const dark = colours(light, "dark");
    expect(dark).toMatchObject({
      "--background": "0 0% 3%",
      "--foreground": "212 78% 85%",
      "--primary": "212 78% 85%",
      "--primary-fg": "0 0% 0%",
    });
    expect(Number(dark["--danger"]!.split(" ")[2]!.replace("%", ""))).toBeGreaterThanOrEqual(55);
  });

  it("keeps a brand primary that still stands out on the mirrored background", () => {
    const green = { ...light, color_primary: "152 60% 45%" };
    expect(colours(green, "dark")["--primary"]).toBe("152 60% 45%");
  });

  it("mirrors a dark theme for a light device", () => {
    const dark = { ...light, mode: "dark", color_background: "220 20% 8%", color_foreground: "0 0% 95%" };
    expect(colours(dark, "light")).toMatchObject({ "--background": "220 20% 92%", "--foreground": "0 0% 5%" });
    expect(colours(dark, "dark")).toMatchObject({ "--background": "220 20% 8%" });
  });

  it("makes the muted colour read as text on the background and the panels (4.5:1) in both schemes, moving its lightness no further than needed", () => {
    const hsl = (value: string) => {
      const [h, s, l] = value.replace(/%/g, "").split(" ").map(Number) as [number, number, number];
      return { h, s, l };
    };
    for (const scheme of ["light", "dark"] as const) {
      const painted = colours(light, scheme);
      const ratio = contrastOf(hsl(painted["--muted"]!), hsl(painted["--background"]!));
      const onPanel = contrastOnSurface(hsl(painted["--muted"]!), panelOf(hsl(painted["--background"]!), hsl(painted["--primary"]!)));
      expect(Math.min(ratio, onPanel), `${scheme}: on the background and on the terms' panel`).toBeGreaterThanOrEqual(4.5);
      expect(Math.min(ratio, onPanel), scheme).toBeLessThan(4.8);
    }
    const readable = { ...light, color_muted: "210 10% 30%" };
    expect(colours(readable, "light")["--muted"], "a muted colour that reads is kept").toBe("210 10% 30%");
  });

  it("takes a session's accent as the primary pair (its ink the more legible), mirrored for the other scheme like the theme's own", () => {
    expect(accentTokens("#0a7d4f")).toEqual({ color_primary: "156 85.19% 26.47%", color_primary_fg: "0 0% 100%" });
    expect(accentTokens("#ffd400")).toMatchObject({ color_primary_fg: "0 0% 0%" });
    expect(accentTokens("#808080")).toMatchObject({ color_primary: "0 0% 50.2%" });
    const branded = { ...light, ...accentTokens("#0a7d4f") };
    expect(colours(branded, "light")).toMatchObject({ "--primary": "156 85.19% 26.47%", "--primary-fg": "0 0% 100%" });
    expect(colours(branded, "dark")).toMatchObject({ "--primary": "156 85.19% 73.53%", "--primary-fg": "0 0% 0%" });
  });

  it("carries radii, fonts and weights; loads assets only from the service itself", () => {
    expect(shape(light)).toMatchObject({ "--radius-md": "12px", "--weight-heading": "600" });
    expect(ownAsset("https://service.example/assets/logo.svg", "https://service.example")).toBe("https://service.example/assets/logo.svg");
    expect(ownAsset("https://cdn.merchant.example/logo.svg", "https://service.example")).toBeNull();
    expect(ownAsset("not a url", "https://service.example")).toBeNull();
  });
});

describe("paced reading cues", () => {
  it("follow the nonce's schedule: pauses breathe, speak segments carry the next words, about 2.5 a second", () => {
    const words = "one two three four five six seven".split(" ");
    const cues = pacedCues("n_7f3a9c21e4", 30, words);
    const { segments } = challengeSchedule("n_7f3a9c21e4", 10, 300);
    expect(cues.map(({ kind, start_s, end_s }) => ({ kind, start_s, end_s }))).toEqual(segments);
    expect(cues[0]).toMatchObject({ kind: "pause", start_s: 0, end_s: 1, text: "" });
    expect(cues[1]).toMatchObject({ kind: "speak", start_s: 1, end_s: 5.4 });
    expect(cues[1]!.text.split(" ")).toHaveLength(11);
    expect(cues[1]!.text.startsWith("one two three")).toBe(true);
    expect(cues[3]!.text.split(" ")[0]).toBe(words[11 % words.length]);
    expect(cueAt(cues, 0.5)).toBe(cues[0]);
    expect(cueAt(cues, 5)).toBe(cues[1]);
    expect(cueAt(cues, 99)).toBe(cues[cues.length - 1]);
  });
});

describe("the light challenge's ink", () => {
  it("is black on every colour of the palette but blue, and white on blue; each at a contrast of at least 4.5:1", () => {
    const luminance = (hex: string) => {
      const [r, g, b] = [1, 3, 5].map((i) => {
        const c = Number.parseInt(hex.slice(i, i + 2), 16) / 255;
        return c <= 0.04045 ? c / 12.92 : ((c + 0.055) / 1.055) ** 2.4;
      }) as [number, number, number];
      return 0.2126 * r + 0.7152 * g + 0.0722 * b;
    };
    const contrast = (a: string, b: string) => {
      const [light, dark] = [luminance(a), luminance(b)].sort((x, y) => y - x) as [number, number];
      return (light + 0.05) / (dark + 0.05);
    };
    expect(LIGHT_PALETTE.map((c) => [c.name, inkOn(c.hex)])).toEqual([
      ["red", "#000000"],
      ["green", "#000000"],
      ["blue", "#ffffff"],
      ["yellow", "#000000"],
      ["cyan", "#000000"],
    ]);
    for (const colour of LIGHT_PALETTE) expect(contrast(colour.hex, inkOn(colour.hex))).toBeGreaterThanOrEqual(4.5);
    expect([inkOn("#ffffff"), inkOn("#000000")]).toEqual(["#000000", "#ffffff"]);
  });
});
