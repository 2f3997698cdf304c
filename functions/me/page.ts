/**
 * The person's page itself (`GET /functions/v1/me`, D-540): the HTML is written here in the
 * person's locale with its words embedded; the script and the style sheet are the function's
 * static assets (client/me/, built by scripts/local/build.ts into a folder named by its content),
 * served from this origin. The page is reached by a top-level link from a merchant's site, so it
 * takes no same-site check; everything it then asks for does (index.ts). Its policy is stricter
 * than the hosted screen's: no camera, no WebAssembly, no worker; the capture happens on the
 * hosted screen, in a window of its own.
 */
import type { Context, Hono } from "hono";
import { ME_LINK_PARAMS } from "../../shared/contracts/me";
import type { AppEnv } from "../../shared/edge/app";
import { assetVersion, versionedAsset } from "../../shared/edge/assets";
import { noStore } from "../../shared/edge/no-store";
import { documented } from "../../shared/edge/openapi";
import { contentSecurityPolicy, escapeHtml, pageHead, securePage } from "../../shared/edge/pages";
import { type Locale, type MessageKey, messagesOf, translate } from "../../shared/kernel/i18n";
import { mountOf } from "../../shared/kernel/registry";

/** Only this origin, for scripts, styles, images and requests; nothing else. */
export const ME_CONTENT_SECURITY_POLICY = contentSecurityPolicy({
  "script-src": "'self'",
  "connect-src": "'self'",
  "img-src": "'self'",
  "style-src": "'self'",
});

const secure = (headers: Headers) =>
  securePage(headers, { csp: ME_CONTENT_SECURITY_POLICY, permissions: "camera=(), microphone=(), geolocation=()" });

/** The page's words in its locale: its own, and the mandate words it shares with the hosted screen. */
function pageWords(locale: Locale): Record<string, string> {
  return { ...messagesOf(locale, "me."), ...messagesOf(locale, "screen.mandate.") };
}

/**
 * The page: one view at a time (`data-view`), each heading focusable so a screen reader hears
 * where the person is; the lists are written by client/me/page.ts from the function's reads.
 */
function mePage(locale: Locale, base: string, assets: string): string {
  const m = (key: MessageKey) => escapeHtml(translate(locale, key));
  const section = (id: string, title: MessageKey) =>
    `<section id="${id}" class="part" aria-labelledby="${id}-title"><h2 id="${id}-title" tabindex="-1">${m(title)}</h2><div class="part-body"></div></section>`;
  return `${pageHead({ locale, title: `<title>${m("me.title")}</title>`, stylesheet: `${assets}me.css`, words: pageWords(locale) })}
<body class="me" data-view="loading" data-base="${base}" data-link-merchant="${ME_LINK_PARAMS.merchant}" data-link-environment="${ME_LINK_PARAMS.environment}">
<header class="brand me-bar">
<span>${m("me.brand")}</span>
<button type="button" id="sign-out" class="secondary small" hidden>${m("me.signout")}</button>
</header>
<main class="screen me-main">
<p id="notice" class="notice" role="status" aria-live="polite"></p>
<section data-view="loading">
<h1 tabindex="-1">${m("me.loading")}</h1>
<div class="spinner" aria-hidden="true"></div>
</section>
<section data-view="signed-out" hidden>
<h1 tabindex="-1">${m("me.signin.title")}</h1>
<p class="lead">${m("me.signin.lead")}</p>
<div id="sign-in-methods" class="actions">
<button type="button" id="sign-in" class="primary" data-method="merchant-link">${m("me.signin.start")}</button>
<button type="button" id="sign-in-passkey" class="secondary" data-method="passkey">${m("me.signin.passkey")}</button>
</div>
<p id="sign-in-via" class="muted">${m("me.signin.via")}</p>
<p id="sign-in-nolink" class="card" hidden>${m("me.signin.nolink")}</p>
<p id="sign-in-status" class="guidance" role="status" aria-live="polite"></p>
<div class="actions"><button type="button" id="sign-in-reopen" class="secondary" hidden>${m("me.signin.reopen")}</button></div>
</section>
<section data-view="signed-in" hidden>
<h1 tabindex="-1">${m("me.title")}</h1>
<p id="session-until" class="muted"></p>
<p id="environment-note" class="card test-note" hidden>${m("me.environment.test")}</p>
<nav aria-label="${m("me.nav.label")}"><ul class="me-nav">
<li><a href="#agents">${m("me.agents.title")}</a></li>
<li><a href="#merchants">${m("me.merchants.title")}</a></li>
<li><a href="#disclosures">${m("me.disclosures.title")}</a></li>
<li><a href="#receipts">${m("me.receipts.title")}</a></li>
<li><a href="#devices">${m("me.devices.title")}</a></li>
<li><a href="#data">${m("me.data.title")}</a></li>
</ul></nav>
${section("agents", "me.agents.title")}
${section("merchants", "me.merchants.title")}
${section("disclosures", "me.disclosures.title")}
${section("receipts", "me.receipts.title")}
${section("devices", "me.devices.title")}
<section id="data" class="part" aria-labelledby="data-title">
<h2 id="data-title" tabindex="-1">${m("me.data.title")}</h2>
<p>${m("me.export.lead")}</p>
<div class="actions"><button type="button" id="export" class="secondary">${m("me.export.start")}</button></div>
<p class="erase-lead">${m("me.erase.lead")}</p>
<div id="erase-actions" class="actions"></div>
</section>
</section>
</main>
<dialog id="confirm" aria-labelledby="confirm-title" aria-describedby="confirm-body">
<h2 id="confirm-title"></h2>
<div id="confirm-body"></div>
<div class="actions">
<button type="button" id="confirm-yes" class="primary danger">${m("me.confirm.yes")}</button>
<button type="button" id="confirm-no" class="secondary">${m("me.confirm.cancel")}</button>
</div>
</dialog>
<script type="module" src="${assets}me.js"></script>
</body>
</html>
`;
}

/** The folder of the current version of the page's assets, from the site's root (D-406). */
async function assetsOf(c: Context<AppEnv>): Promise<string> {
  return `${mountOf("me")}/assets/${await assetVersion(c, "me")}/`;
}

/**
 * Registers the page and its assets; before the function's `noStore`, which the assets do not take
 * (a versioned file is kept for good), and which the page sets itself.
 */
export function mountPage(app: Hono<AppEnv>): void {
  app.get(
    "/",
    documented({ summary: "The person's page", success: { status: 200, description: "The page", contentType: "text/html" } }),
    noStore,
    async (c) => {
      const response = c.html(mePage(c.var.locale, mountOf("me"), await assetsOf(c)));
      secure(response.headers);
      response.headers.set("content-language", c.var.locale);
      response.headers.set("vary", "accept-language");
      return response;
    },
  );
  app.get(
    "/assets/*",
    documented({ summary: "The page's script and style sheet", success: { status: 200, description: "The file", contentType: "*/*" } }),
    async (c) => {
      const response = await versionedAsset(c, "me", c.req.path.slice(c.req.path.indexOf("/assets/") + "/assets".length));
      secure(response.headers);
      return response;
    },
  );
}
