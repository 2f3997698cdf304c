/**
 * The pages and static assets of the hosted capture screen (GET routes of `hosted-capture`): the
 * HTML is written here, the browser code, models and .wasm files come from the Worker's static
 * assets (`ASSETS`, built by scripts/local/build.ts from client/ and the model packages). Every
 * response carries a strict Content-Security-Policy: the page loads nothing from any other host.
 */
import type { Context, Hono } from "hono";
import { SCREEN_PAGE_PATH } from "../../shared/contracts/hosted-screen";
import type { AppEnv } from "../../shared/edge/app";
import { assetVersion, versionedAsset } from "../../shared/edge/assets";
import { noStore } from "../../shared/edge/no-store";
import { documented } from "../../shared/edge/openapi";
import { contentSecurityPolicy, escapeHtml, pageHead, securePage } from "../../shared/edge/pages";
import { type Locale, locales, type MessageKey, messagesOf, translate } from "../../shared/kernel/i18n";

/** What the pages may load and do: only this origin; WebAssembly compiled, never eval. */
export const CONTENT_SECURITY_POLICY = contentSecurityPolicy({
  "script-src": "'self' 'wasm-unsafe-eval'",
  "worker-src": "'self'",
  "connect-src": "'self'",
  "img-src": "'self' data: blob:",
  "media-src": "'self' blob: mediastream:",
  "style-src": "'self'",
  "font-src": "'self'",
});

/** Headers of every page and asset. */
function secure(headers: Headers): void {
  securePage(headers, { csp: CONTENT_SECURITY_POLICY, permissions: "camera=(self), microphone=(self), geolocation=()" });
}

function html(c: Context<AppEnv>, body: string): Response {
  const response = c.html(body);
  secure(response.headers);
  return response;
}

/** The device check: computes a descriptor from this device's camera and microphone and shows it; posts nothing. */
function checkPage(assets: string): string {
  return `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>Camera and microphone check</title>
<link rel="stylesheet" href="${assets}screen.css">
</head>
<body>
<main class="screen">
<h1>Camera and microphone check</h1>
<p>This page computes a presence descriptor on this device and shows it. Nothing is sent.</p>
<video id="camera" muted playsinline aria-label="Camera preview"></video>
<p id="status" role="status" aria-live="polite">Starting…</p>
<button id="start" type="button" disabled>Record</button>
<progress id="progress" max="1" value="0" hidden></progress>
<pre id="descriptor" hidden></pre>
<pre id="stats" hidden></pre>
</main>
<script type="module" src="${assets}check.js"></script>
</body>
</html>
`;
}

/**
 * The screen's words in every locale it speaks (its own and the mandate scopes' labels): the page
 * is written in the person's locale, and a /v1 session's own locale, known only once the session
 * boots, rewords it (client/pages/session.ts, `data-words`).
 */
function screenWords(): Record<Locale, Record<string, string>> {
  return Object.fromEntries(
    locales.map((locale) => [locale, { ...messagesOf(locale, "screen."), ...messagesOf(locale, "scope.") }]),
  ) as Record<Locale, Record<string, string>>;
}

/**
 * The hosted screen (client/pages/session.ts renders it): one section per view, in the person's
 * locale, with the screen's words embedded; each fixed text names its key (`data-words`, and
 * `data-words-label`, `data-words-alt` for attributes) so the page can speak a session's locale.
 * The session token stays in the URL's fragment, which no request carries.
 */
function sessionPage(locale: Locale, assets: string): string {
  const m = (key: MessageKey) => escapeHtml(translate(locale, key));
  const title = `<title data-words="screen.loading">${m("screen.loading")}</title>`;
  return `${pageHead({ locale, title, stylesheet: `${assets}screen.css`, words: screenWords() })}
<body class="hosted" data-state="loading">
<header class="brand"><img id="logo" alt="" width="40" height="40" hidden><div class="brand-text"><span id="brand-name"></span><span id="brand-headline" class="headline" hidden></span></div></header>
<main class="screen">
<section data-view="loading">
<h1 tabindex="-1" data-words="screen.loading">${m("screen.loading")}</h1>
<div class="spinner" aria-hidden="true"></div>
</section>
<section data-view="handoff" hidden>
<h1 tabindex="-1" data-words="screen.handoff.title">${m("screen.handoff.title")}</h1>
<p class="lead" data-words="screen.handoff.lead">${m("screen.handoff.lead")}</p>
<img id="handoff-qr" class="qr" alt="${m("screen.handoff.qr")}" data-words-alt="screen.handoff.qr" width="240" height="240">
<p id="handoff-status" class="guidance" role="status" aria-live="polite"></p>
<div class="actions">
<button type="button" id="handoff-renew" class="primary" hidden data-words="screen.handoff.renew">${m("screen.handoff.renew")}</button>
<button type="button" id="handoff-here" class="secondary" data-words="screen.handoff.here">${m("screen.handoff.here")}</button>
</div>
</section>
<section data-view="intro" hidden>
<h1 id="intro-title" tabindex="-1"></h1>
<p id="intro-lead" class="lead"></p>
<dl id="intro-terms" class="terms" hidden></dl>
<div class="card">
<h2 id="why-title" data-words="screen.why.title">${m("screen.why.title")}</h2>
<p id="why-body"></p>
</div>
<div id="consent-row" class="choice" hidden>
<input type="checkbox" id="consent" aria-describedby="consent-error"><label for="consent" id="consent-label"></label>
</div>
<p id="consent-error" class="field-error" role="alert" hidden data-words="screen.consent.required">${m("screen.consent.required")}</p>
<div id="paced-row" class="choice">
<input type="checkbox" id="paced"><label for="paced" id="paced-label"></label>
</div>
<div class="actions">
<button type="button" id="continue" class="primary" data-words="screen.action.continue">${m("screen.action.continue")}</button>
<button type="button" class="secondary" data-cancel data-words="screen.action.cancel">${m("screen.action.cancel")}</button>
</div>
</section>
<section data-view="capture" hidden>
<h1 id="capture-title" tabindex="-1"></h1>
<div class="stage"><video id="camera" muted playsinline aria-label="${m("screen.camera.label")}" data-words-label="screen.camera.label"></video></div>
<ul id="gates" class="gates">
<li data-gate="face" data-passed="false"><span class="gate-mark" aria-hidden="true"></span><span class="gate-label" data-words="screen.gate.face">${m("screen.gate.face")}</span> <span class="gate-state" data-words="screen.gate.waiting">${m("screen.gate.waiting")}</span></li>
<li data-gate="light" data-passed="false"><span class="gate-mark" aria-hidden="true"></span><span class="gate-label" data-words="screen.gate.light">${m("screen.gate.light")}</span> <span class="gate-state" data-words="screen.gate.waiting">${m("screen.gate.waiting")}</span></li>
<li data-gate="camera" data-passed="false"><span class="gate-mark" aria-hidden="true"></span><span class="gate-label" data-words="screen.gate.camera">${m("screen.gate.camera")}</span> <span class="gate-state" data-words="screen.gate.waiting">${m("screen.gate.waiting")}</span></li>
</ul>
<p id="guidance" class="guidance" role="status" aria-live="polite"></p>
<div id="recording" class="recording" hidden>
<progress id="progress" max="1" value="0" aria-label="${m("screen.recording.progress")}" data-words-label="screen.recording.progress"></progress>
<span id="time-left" aria-hidden="true"></span>
</div>
<div id="reading" class="reading" hidden></div>
<div class="actions">
<button type="button" id="record" class="primary" disabled data-words="screen.action.record">${m("screen.action.record")}</button>
<button type="button" class="secondary" data-cancel data-words="screen.action.cancel">${m("screen.action.cancel")}</button>
</div>
</section>
<section data-view="sending" hidden>
<h1 tabindex="-1" data-words="screen.sending">${m("screen.sending")}</h1>
<div class="spinner" aria-hidden="true"></div>
</section>
<section data-view="outcome" id="outcome" hidden>
<div class="outcome-mark" aria-hidden="true"></div>
<h1 id="outcome-title" tabindex="-1"></h1>
<p id="outcome-message" class="lead" role="status"></p>
<p id="outcome-receipt" hidden><span data-words="screen.outcome.receipt">${m("screen.outcome.receipt")}</span>: <strong id="receipt-code"></strong></p>
<p id="outcome-again" class="muted" hidden></p>
<div id="outcome-return" hidden>
<p id="return-note" class="muted"></p>
<div class="actions">
<a id="return-link" class="button primary" href="./"></a>
<button type="button" id="return-stay" class="secondary" data-words="screen.return.stay">${m("screen.return.stay")}</button>
</div>
</div>
</section>
<section data-view="error" hidden>
<h1 tabindex="-1" data-words="screen.error.title">${m("screen.error.title")}</h1>
<p id="error-message" class="lead" role="alert"></p>
<div class="actions"><button type="button" id="error-retry" class="primary" hidden data-words="screen.action.retry">${m("screen.action.retry")}</button></div>
</section>
</main>
<footer id="footer-note" class="footer-note" hidden></footer>
<script type="module" src="${assets}session.js"></script>
</body>
</html>
`;
}

const PAGE = { status: 200, description: "The page", contentType: "text/html" };
const ASSET = { status: 200, description: "The file, with its own content type", contentType: "*/*" };

/** The folder of the current version of the screen's assets, relative to the pages (D-406). */
async function assetsOf(c: Context<AppEnv>): Promise<string> {
  return `assets/${await assetVersion(c, "hosted-capture")}/`;
}

/** Registers the pages and assets on the function's app. */
export function mountPages(app: Hono<AppEnv>): void {
  app.get("/check", documented({ summary: "The device check page", success: PAGE }), noStore, async (c) =>
    html(c, checkPage(await assetsOf(c))),
  );
  app.get(
    SCREEN_PAGE_PATH,
    documented({ summary: "The hosted screen (the session token in the fragment)", success: PAGE }),
    noStore,
    async (c) => {
      const response = html(c, sessionPage(c.var.locale, await assetsOf(c)));
      response.headers.set("content-language", c.var.locale);
      response.headers.set("vary", "accept-language");
      return response;
    },
  );

  app.get("/assets/*", documented({ summary: "The screen's scripts, styles and models", success: ASSET }), async (c) => {
    const response = await versionedAsset(c, "hosted-capture", c.req.path.slice(c.req.path.indexOf("/assets/") + "/assets".length));
    secure(response.headers);
    return response;
  });
}
