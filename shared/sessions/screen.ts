/**
 * The hosted screen's boot: the session token the merchant handed to the browser is exchanged as
 * the service (hosted-session-consume's operation), and the screen gets what it shows and what it
 * needs to act: the action and its terms, the merchant's name and capture theme, the nonce of the
 * one capture, and its credential for complete and cancel. For an agent verification card, also
 * the card's terms: who asks and for what purpose.
 */
import { capturePresenceOf, passkeyCeremonyOf, type ScreenAction, type ScreenBoot, type ScreenPasskey } from "../contracts/hosted-screen";
import { assertionOptions } from "../devices/assertion";
import type { RelyingParty } from "../devices/ceremony";
import { registrationOptions, USER_HANDLE_BYTES } from "../devices/registration";
import type { Deps } from "../kernel/deps";
import { locales, negotiateLocale } from "../kernel/i18n";
import { randomBase64Url } from "../lib/crypto";
import { merchantTheme } from "../themes/merchant-theme";
import type { ThemeAssetBases } from "../themes/theme";
import { HOSTED_CONSENT } from "./complete";
import { consumeSession } from "./consume";

/**
 * Boots the screen once per session. The merchant's metadata stays with the merchant; the name
 * shown is the session's `brand`, else the published capture theme's brand name, else the
 * merchant's name. `locale` is the person's (Accept-Language), `locales` those the service speaks.
 * A /v1 session adds `mode` (docs/resource-api.md#sessions): its name, the attribute or mandate
 * terms to show, the merchant's branding, and the way back; its `locale`, when set, wins.
 * In live mode the boot also serves the capture's passkey ceremony for `rp` (the service's own
 * relying party): its options as issued, the challenge aside (D-485).
 */
export async function bootScreen(deps: Deps, sessionToken: string, themeAssets: ThemeAssetBases, rp: RelyingParty): Promise<ScreenBoot> {
  const userHandle = randomBase64Url(USER_HANDLE_BYTES);
  const exchanged = await consumeSession(deps, { kind: "service" }, sessionToken, { userHandle });
  const { session, environment } = exchanged;
  const tenant = { merchantId: session.merchant_id, environment };
  const theme = await merchantTheme(deps, tenant, { merchant_id: session.merchant_id, surface: "capture" }, themeAssets);
  const displayName = session.brand ?? (theme.customized ? String(theme.theme.brand_name) : exchanged.merchant_name);
  const action = session.action as ScreenAction;
  return {
    session_id: session.session_id,
    merchant_id: session.merchant_id,
    environment,
    action: session.action as ScreenAction,
    external_txn_ref: session.external_txn_ref,
    amount_cents: session.amount_cents,
    currency: session.currency,
    display_name: displayName,
    expires_at: session.expires_at,
    // The session's locale when the screen speaks it (or its language), else the person's (resource API 4.4: absent, the browser's).
    locale: exchanged.mode?.locale ? negotiateLocale(`${exchanged.mode.locale}, ${deps.locale};q=0.1`) : deps.locale,
    locales: [...locales],
    consent: session.action === "enroll" || session.action === "claim" ? HOSTED_CONSENT : null,
    card: exchanged.card,
    capture_nonce: exchanged.capture_nonce,
    presence: capturePresenceOf(action, exchanged.mode?.mandate),
    passkey: environment === "live" ? await screenPasskey(rp, action, { userHandle, userName: displayName }) : null,
    opener_origin: exchanged.opener_origin ?? null,
    screen_token: exchanged.screen_token,
    theme,
    ...(exchanged.mode && { mode: exchanged.mode }),
  };
}

/**
 * The passkey ceremony of a capture of `action`: a registration with the issued user handle (the
 * name an authenticator lists it under is the merchant's, where it was made), or an assertion by any
 * of the person's discoverable credentials for the relying party. An enrolment's registration comes
 * with that assertion's options too (`existing`): a person enrolled at another merchant signs with
 * the passkey they have, and their face, known, enrols them here without a second one (D-641).
 */
async function screenPasskey(
  rp: RelyingParty,
  action: ScreenAction,
  user: { userHandle: string; userName: string },
): Promise<ScreenPasskey> {
  return passkeyCeremonyOf(action) === "register"
    ? { ceremony: "register", options: await registrationOptions(rp, user), existing: await assertionOptions(rp) }
    : { ceremony: "assert", options: await assertionOptions(rp) };
}
