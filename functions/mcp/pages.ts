/**
 * The authorization endpoint's pages (server-rendered, no script): sign-in with a first-party
 * session token, the consent screen themed with the merchant's mandate theme, and errors. Every
 * value that came from a client (its name, the redirect host) is escaped; the CSP allows nothing
 * but the page's own nonce-bound style and posting the form to this endpoint.
 */

import { type Locale, type MessageKey, translate } from "../../shared/kernel/i18n";
import { randomHex } from "../../shared/lib/crypto";

const escapeHtml = (value: string) => value.replace(/[&<>"']/g, (char) => `&#${char.charCodeAt(0)};`);

interface Page {
  html: string;
  headers: Headers;
}

/** Mandate theme tokens the pages use (merchant-theme-get's `theme`). */
type Theme = Record<string, string | number | null>;

function page(locale: Locale, title: string, body: string, theme: Theme | null, formAction: string[]): Page {
  const nonce = randomHex(16);
  const t = (token: string, fallback: string | number) => String(theme?.[token] ?? fallback);
  const style = `body{margin:0;font-family:${t("font_body_family", "system-ui, sans-serif")};background:hsl(${t("color_background", "0 0% 97%")});color:hsl(${t("color_foreground", "212 78% 15%")})}
main{max-width:32rem;margin:3rem auto;padding:2rem;background:#fff;border:1px solid hsl(${t("color_border", "210 14% 89%")});border-radius:${t("radius_lg_px", 20)}px}
h1{font-size:1.3rem}h2{font-size:1.05rem;margin-top:1.6rem}button{padding:.6rem 1.2rem;border-radius:${t("radius_md_px", 12)}px;border:1px solid hsl(${t("color_primary", "212 78% 15%")});background:hsl(${t("color_primary", "212 78% 15%")});color:hsl(${t("color_primary_fg", "0 0% 100%")})}
button[value=deny]{background:transparent;color:hsl(${t("color_primary", "212 78% 15%")})}textarea{width:100%}.muted{color:hsl(${t("color_muted", "210 10% 55%")})}`;
  const html = `<!doctype html><html lang="${locale}"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width,initial-scale=1"><title>${escapeHtml(title)}</title><style nonce="${nonce}">${style}</style></head><body><main>${body}</main></body></html>`;
  const headers = new Headers({
    "content-type": "text/html; charset=utf-8",
    "content-language": locale,
    "content-security-policy": `default-src 'none'; style-src 'nonce-${nonce}'; img-src 'self' https:; form-action ${["'self'", ...formAction].join(" ")}; frame-ancestors 'none'; base-uri 'none'`,
    "x-frame-options": "DENY",
    "referrer-policy": "no-referrer",
    "x-content-type-options": "nosniff",
  });
  return { html, headers };
}

/**
 * The sign-in forms (both post to this URL): the owner's first-party app hands over its session
 * token, or the owner names a business they own and proves presence on the capture screen.
 */
export function signInPage(locale: Locale, message?: MessageKey): Page {
  const m = (key: MessageKey) => escapeHtml(translate(locale, key));
  return page(
    locale,
    translate(locale, "agent.signin.title"),
    `<h1>${m("agent.signin.title")}</h1>${message ? `<p role="alert">${m(message)}</p>` : ""}
<h2>${m("agent.signin.token_heading")}</h2><p class="muted">${m("agent.signin.body")}</p>
<form method="post"><label>${m("agent.signin.token")}<br><textarea name="session_token" rows="4" required autocomplete="off"></textarea></label><p><button type="submit">${m("agent.signin.submit")}</button></p></form>
<h2>${m("agent.signin.presence")}</h2><p class="muted">${m("agent.signin.presence.body")}</p>
<form method="post"><input type="hidden" name="sign_in" value="presence"><p><label>${m("agent.signin.presence.merchant")}<br><input name="merchant_id" required autocomplete="off" size="40"></label></p>
<p><label>${m("agent.signin.presence.environment")} <select name="environment"><option value="live">${m("agent.signin.presence.live")}</option><option value="test">${m("agent.signin.presence.test")}</option></select></label></p>
<p><button type="submit">${m("agent.signin.presence.submit")}</button></p></form>`,
    null,
    [],
  );
}

/**
 * Proving presence: the capture screen opens in a new tab (its token in the fragment, never sent
 * to a server); back here, Continue posts the session id, which the browser's cookie must match.
 */
export function presencePage(locale: Locale, view: { screenUrl: string | null; sessionId: string }, message?: MessageKey): Page {
  const m = (key: MessageKey) => escapeHtml(translate(locale, key));
  return page(
    locale,
    translate(locale, "agent.signin.title"),
    `<h1>${m("agent.signin.presence.title")}</h1>${message ? `<p role="alert">${m(message)}</p>` : ""}<p>${m("agent.signin.presence.steps")}</p>
${view.screenUrl ? `<p><a href="${escapeHtml(view.screenUrl)}" target="_blank" rel="noopener noreferrer">${m("agent.signin.presence.open")}</a></p>` : ""}
<form method="post"><input type="hidden" name="presence_session" value="${escapeHtml(view.sessionId)}"><p><button type="submit">${m("agent.signin.presence.continue")}</button></p></form>`,
    null,
    [],
  );
}

export interface ConsentView {
  agentName: string;
  /** The client's verified domain (Client ID Metadata Documents), else null: a self-registered name. */
  agentDomain: string | null;
  redirectHost: string;
  redirectOrigin: string;
  redirectIsLoopback: boolean;
  merchants: { merchant_id: string; name: string }[];
  scopes: readonly string[];
  handle: string;
  sessionToken: string;
  theme: Theme | null;
  /** Whom the agent will act for, as the title says it. */
  brand: string;
}

/** The consent screen: the agent's name, where access goes, the business and the scopes; approve or deny. */
export function consentPage(locale: Locale, view: ConsentView): Page {
  const m = (key: MessageKey, params: Record<string, string> = {}) => escapeHtml(translate(locale, key, params));
  const brand = view.brand;
  const merchants = view.merchants
    .map(
      (merchant, i) =>
        `<label><input type="radio" name="merchant_id" value="${escapeHtml(merchant.merchant_id)}"${i === 0 ? " checked" : ""}> ${escapeHtml(merchant.name)}</label>`,
    )
    .join("<br>");
  const scopes = view.scopes
    .map((scope) => {
      const key = `agent.scope.${scope}` as MessageKey;
      return `<li><label><input type="checkbox" name="scope" value="${escapeHtml(scope)}" checked> ${m(key)}</label></li>`;
    })
    .join("");
  return page(
    locale,
    translate(locale, "agent.consent.title", { agent: view.agentName, merchant: brand }),
    `<h1>${m("agent.consent.title", { agent: view.agentName, merchant: brand })}</h1>
<p>${view.agentDomain ? escapeHtml(view.agentDomain) : m("agent.consent.unverified")}</p>
<p>${m("agent.consent.redirect", { host: view.redirectHost })}</p>${view.redirectIsLoopback ? `<p><strong>${m("agent.consent.loopback")}</strong></p>` : ""}
<form method="post"><input type="hidden" name="handle" value="${escapeHtml(view.handle)}"><input type="hidden" name="session_token" value="${escapeHtml(view.sessionToken)}">
<fieldset><legend>${m("agent.consent.merchant")}</legend>${merchants}</fieldset>
<p>${m("agent.consent.scopes")}</p><ul>${scopes}</ul>
<p><button name="decision" value="approve">${m("agent.consent.approve")}</button> <button name="decision" value="deny">${m("agent.consent.deny")}</button></p></form>`,
    view.theme,
    [view.redirectOrigin],
  );
}

/** An error shown on the page (never a redirect: the request or client could not be trusted). */
export function errorPage(locale: Locale, message: string): Page {
  return page(
    locale,
    translate(locale, "agent.error.title"),
    `<h1>${escapeHtml(translate(locale, "agent.error.title"))}</h1><p>${escapeHtml(message)}</p>`,
    null,
    [],
  );
}
