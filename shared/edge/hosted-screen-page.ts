/**
 * The hosted screen's page (functions/hosted-capture serves it; client/pages/session.ts runs it),
 * here so that the console's theme editor can show the same markup as a still preview of the
 * introduction (D-670): one page, two readers, no copy of it to drift.
 */
import { type Locale, locales, type MessageKey, messagesOf, translate } from "../kernel/i18n";
import { escapeHtml, pageHead } from "./pages";

/**
 * A still of the introduction, as the console's preview shows it: the view shown without the
 * screen's script, its texts and the merchant's logo written in, and the theme's own style sheets
 * (its colours for one scheme, its fonts) after the screen's.
 */
export interface ScreenPreview {
  brand: string;
  logo: string | null;
  title: string;
  lead: string;
  /** The terms the introduction lists under its lead (a mandate's: the agent, what it may do, the limit, until when). */
  terms: { label: string; value: string }[];
  why: string;
  paced: string;
  stylesheets: string[];
}

/**
 * The screen's words in every locale it speaks (its own and the mandate scopes' labels): the page
 * is written in the person's locale, and a /v1 session's own locale, known only once the session
 * boots, rewords it (client/pages/session.ts, `data-words`).
 */
export function screenWords(): Record<Locale, Record<string, string>> {
  return Object.fromEntries(
    locales.map((locale) => [locale, { ...messagesOf(locale, "screen."), ...messagesOf(locale, "scope.") }]),
  ) as Record<Locale, Record<string, string>>;
}

/**
 * The hosted screen (client/pages/session.ts renders it): one section per view, in the person's
 * locale, with the screen's words embedded; each fixed text names its key (`data-words`, and
 * `data-words-label`, `data-words-alt` for attributes) so the page can speak a session's locale.
 * The session token stays in the URL's fragment, which no request carries. With `preview`, a still
 * of the introduction instead (ScreenPreview), which loads no script.
 */
export function sessionPage(locale: Locale, assets: string, preview?: ScreenPreview): string {
  const m = (key: MessageKey) => escapeHtml(translate(locale, key));
  const title = `<title data-words="screen.loading">${m("screen.loading")}</title>`;
  const text = (value: string | undefined) => escapeHtml(value ?? "");
  const head = pageHead({ locale, title, stylesheet: `${assets}screen.css`, words: screenWords() }).replace(
    "</head>",
    `${(preview?.stylesheets ?? []).map((href) => `<link rel="stylesheet" href="${escapeHtml(href)}">\n`).join("")}</head>`,
  );
  const logo = preview?.logo ? ` src="${escapeHtml(preview.logo)}"` : " hidden";
  return `${head}
<body class="hosted" data-state="${preview ? "intro" : "loading"}">
<header class="brand"><img id="logo" alt="" width="40" height="40"${logo}><div class="brand-text"><span id="brand-name">${text(preview?.brand)}</span><span id="brand-headline" class="headline" hidden></span></div></header>
<main class="screen">
<section data-view="loading"${preview ? " hidden" : ""}>
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
<section data-view="intro"${preview ? "" : " hidden"}>
<h1 id="intro-title" tabindex="-1">${text(preview?.title)}</h1>
<p id="intro-lead" class="lead">${text(preview?.lead)}</p>
<dl id="intro-terms" class="terms"${preview?.terms.length ? "" : " hidden"}>${(preview?.terms ?? []).map((term) => `<dt>${text(term.label)}</dt><dd>${text(term.value)}</dd>`).join("")}</dl>
<div class="card">
<h2 id="why-title" data-words="screen.why.title">${m("screen.why.title")}</h2>
<p id="why-body">${text(preview?.why)}</p>
</div>
<div id="consent-row" class="choice" hidden>
<input type="checkbox" id="consent" aria-describedby="consent-error"><label for="consent" id="consent-label"></label>
</div>
<p id="consent-error" class="field-error" role="alert" hidden data-words="screen.consent.required">${m("screen.consent.required")}</p>
<div id="paced-row" class="choice">
<input type="checkbox" id="paced"><label for="paced" id="paced-label">${text(preview?.paced)}</label>
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
${preview ? "" : `<script type="module" src="${assets}session.js"></script>`}
</body>
</html>
`;
}
