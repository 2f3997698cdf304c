/**
 * The hosted screen's pure parts (client/screen/): what each session action tells and asks, the
 * theme's colours for each scheme, and the paced reading's cues.
 */
import type * as v from "valibot";
import { describe, expect, expectTypeOf, it } from "vitest";
import { formatMinorUnits, modeOf, type ScreenMode, screenModes } from "../../../client/screen/modes";
import { cueAt, pacedCues } from "../../../client/screen/paced";
import { colours, inkOn, ownAsset, shape } from "../../../client/screen/theme";
import { type ScreenAction, type ScreenBoot, type SessionEnded, screenActions } from "../../../shared/contracts/hosted-screen";
import { LIGHT_PALETTE } from "../../../shared/engine/light";
import { challengeSchedule } from "../../../shared/engine/schedule";
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
  screen_token: "hsc_x",
  theme: { customized: false, theme: {} },
  ...extra,
});
const descriptor = { version: 1 } as never;

/**
 * The actions the server can create a session with that the page has no screen for yet: the /v1
 * modes (resource API 4.4; their screens come with their own issue). A boot of one shows the
 * screen's `unsupported` error. Named here so that a new action cannot go unnoticed: it needs a
 * mode in client/screen/modes.ts or a place on this list.
 */
const withoutScreen = ["claim", "recognise", "attribute", "mandate"] as const satisfies readonly ScreenAction[];

// Compile time: every action of the contract but those above has a mode.
screenModes satisfies Record<Exclude<ScreenAction, (typeof withoutScreen)[number]>, ScreenMode>;

describe("the wire contract", () => {
  it("is what the service's document describes: the boot's and the outcome's shapes fit their answer schemas", () => {
    type Fits<Answer, Schema extends v.GenericSchema> = Answer extends v.InferOutput<Schema> ? true : false;
    expectTypeOf<Fits<ScreenBoot, typeof bootAnswerSchema>>().toEqualTypeOf<true>();
    expectTypeOf<Fits<SessionEnded, typeof sessionEndedSchema>>().toEqualTypeOf<true>();
  });
});

describe("screen modes", () => {
  it("has a mode for every action the server creates sessions with (function API, agent verification cards, the owner's sign-in, /v1), but the named gap", () => {
    const withScreen = Object.keys(screenModes).sort();
    expect(withScreen.filter((action) => (withoutScreen as readonly string[]).includes(action))).toEqual([]);
    expect([...withScreen, ...withoutScreen].sort()).toEqual([...screenActions].sort());
    for (const action of screenActions)
      expect(modeOf(action) !== undefined, action).toBe(!(withoutScreen as readonly string[]).includes(action));
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
