/**
 * The console's pages, written on the server in the owner's locale (D-623): one layout (the mode
 * always shown, the sections, sign-out) around each page's content. Every action is an HTML form
 * posting to the console with the session's CSRF token in a hidden field; irreversible ones say so
 * on their button. Values are escaped by `html` (./html.ts).
 */
import { type Locale, type MessageKey, translate } from "../../shared/kernel/i18n";
import type { OwnerSession } from "../../shared/management/owner-sessions";
import { type Html, html } from "./html";

export const sections = [
  "overview",
  "keys",
  "webhooks",
  "mandates",
  "sessions",
  "receipts",
  "consents",
  "theme",
  "owners",
  "audit",
] as const;
export type Section = (typeof sections)[number];

/** What every page knows: the locale, where the console is mounted, the signed-in owner and the CSRF token. */
export interface Chrome {
  locale: Locale;
  base: string;
  owner: OwnerSession;
  csrf: string;
  merchants: { merchant_id: string; name: string; environment: string }[];
  notice?: Html | string;
}

type Row = Record<string, unknown>;

export const words = (locale: Locale) => (key: MessageKey, params?: Record<string, string | number>) => translate(locale, key, params);

const path = (base: string, section: Section) => (section === "overview" ? `${base}/` : `${base}/${section}`);
const navKey = (section: Section) => `console.nav.${section}` as MessageKey;

/** A form posting to `action` with the CSRF token; `fields` inside. */
export function form(chrome: Pick<Chrome, "base" | "csrf">, action: string, fields: Html, attributes: Html = html``): Html {
  return html`<form method="post" action="${chrome.base}${action}" ${attributes}><input type="hidden" name="csrf_token" value="${chrome.csrf}">${fields}</form>`;
}

function head(locale: Locale, base: string, title: string, csrf?: string): Html {
  return html`<!doctype html>
<html lang="${locale}">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<meta name="color-scheme" content="light dark">
<title>${title}</title>
<link rel="stylesheet" href="${base}/assets/console.css">
${csrf ? html`<meta name="csrf-token" content="${csrf}">` : null}
</head>`;
}

/** A signed-in page: the bar (brand, mode, owner, sign-out), the sections, then `content` under its heading. */
export function page(chrome: Chrome, section: Section, content: Html, title?: string): string {
  const t = words(chrome.locale);
  const { owner, base } = chrome;
  const heading = title ?? t(navKey(section));
  const mode = owner.environment === "live" ? t("console.mode.live") : t("console.mode.test");
  const others = chrome.merchants.filter((m) => m.merchant_id !== owner.merchantId || m.environment !== owner.environment);
  return html`${head(chrome.locale, base, `${heading} · ${owner.merchantName} · ${t("console.title")}`, chrome.csrf)}
<body data-base="${base}" data-environment="${owner.environment}">
<a class="skip" href="#main">${t("console.skip")}</a>
<header class="bar">
<span class="brand">${t("console.brand")}</span>
<span class="mode mode-${owner.environment}" id="mode">${mode}</span>
<span class="who">${t("console.session.as", { owner: owner.subjectRef.slice(0, 12), merchant: owner.merchantName })}</span>
${form(chrome, "/sign-out", html`<button type="submit" class="secondary">${t("console.signout")}</button>`)}
${form(chrome, "/sign-out", html`<input type="hidden" name="everywhere" value="1"><button type="submit" class="secondary">${t("console.signout.everywhere")}</button>`)}
</header>
<nav aria-label="${t("console.nav.label")}"><ul>
${sections.map((s) => html`<li><a href="${path(base, s)}"${s === section ? html` aria-current="page"` : null}>${t(navKey(s))}</a></li>`)}
</ul></nav>
<main id="main" tabindex="-1">
<h1>${heading}</h1>
${chrome.notice ? html`<p class="card notice" role="status">${chrome.notice}</p>` : null}
${content}
${
  others.length
    ? html`<h2>${t("console.switch.label")}</h2><ul>${others.map(
        (m) =>
          html`<li>${form(
            chrome,
            "/sign-in",
            html`<input type="hidden" name="merchant_id" value="${m.merchant_id}"><input type="hidden" name="environment" value="${m.environment}"><span>${m.name} (${m.environment === "live" ? t("console.env.live") : t("console.env.test")})</span> <button type="submit" class="secondary">${t("console.switch.go")}</button>`,
            html`class="inline"`,
          )}</li>`,
      )}</ul>`
    : null
}
</main>
<script type="module" src="${base}/assets/console.js"></script>
</body>
</html>
`.text;
}

/** The sign-in page: the merchant and environment, then the check on the hosted screen. */
export function signInPage(
  locale: Locale,
  base: string,
  options: { notice?: string; merchantId?: string; environment?: string } = {},
): string {
  const t = words(locale);
  return html`${head(locale, base, t("console.signin.title"))}
<body data-base="${base}" data-view="sign-in">
<header class="bar"><span class="brand">${t("console.brand")}</span></header>
<main id="main">
<h1>${t("console.signin.title")}</h1>
${options.notice ? html`<p class="card notice" role="status">${options.notice}</p>` : null}
<p>${t("console.signin.lead")}</p>
<form method="post" action="${base}/sign-in" class="card">
<div class="fields">
<label>${t("console.signin.merchant")}<input name="merchant_id" required maxlength="64" autocomplete="organization" value="${options.merchantId ?? ""}"></label>
<label>${t("console.signin.environment")}<select name="environment">
<option value="test"${options.environment === "live" ? null : html` selected`}>${t("console.env.test")}</option>
<option value="live"${options.environment === "live" ? html` selected` : null}>${t("console.env.live")}</option>
</select></label>
<div><button type="submit">${t("console.signin.start")}</button></div>
</div>
</form>
</main>
</body>
</html>
`.text;
}

/** What a refused request was, in the owner's words (D-700). */
export const problemKinds = ["input", "csrf", "cross_site", "session", "not_found", "last_owner", "refused", "busy", "failed"] as const;
export type ProblemKind = (typeof problemKinds)[number];

/** A refusal as a page (D-700): what went wrong, the code for support, and the way back. */
export interface Problem {
  kind: ProblemKind;
  code: string;
  requestId: string;
  /** The catalogue's text (English), for support: the code's own words. */
  detail: string;
  /** The fields the refusal names, when it names some. */
  fields: string[];
  back: { href: string; label: "back" | "sign_in" | "home" };
}

/**
 * A refused request's page: the message first, focused when the page opens (`autofocus` on the
 * message, no script), then the code for support, then one link back. No session is needed to
 * read it, so it carries none of the signed-in chrome.
 */
export function problemPage(locale: Locale, base: string, problem: Problem): string {
  const t = words(locale);
  return html`${head(locale, base, `${t("console.problem.title")} · ${t("console.title")}`)}
<body data-base="${base}" data-view="problem" data-problem="${problem.kind}">
<header class="bar"><span class="brand">${t("console.brand")}</span></header>
<main id="main">
<div class="card error" id="problem" role="alert" tabindex="-1" autofocus>
<h1>${t("console.problem.title")}</h1>
<p id="problem-message">${t(`console.problem.${problem.kind}` as MessageKey)}</p>
${problem.fields.length ? html`<p>${t("console.problem.fields")}: ${problem.fields.map((f, i) => html`${i ? ", " : ""}<code>${f}</code>`)}</p>` : null}
</div>
<p id="problem-code">${t("console.problem.code")}: <code>${problem.code}</code> · <code>${problem.requestId}</code></p>
<p class="muted" lang="en">${problem.detail}</p>
<p><a class="button" id="problem-back" href="${problem.back.href}">${t(`console.problem.${problem.back.label}` as MessageKey)}</a></p>
</main>
</body>
</html>
`.text;
}

/** The check is open: a link to the hosted screen (a window of its own) and the form that finishes the sign-in. */
export function checkPage(locale: Locale, base: string, started: { session_id: string; url: string }, pending = false): string {
  const t = words(locale);
  return html`${head(locale, base, t("console.signin.title"))}
<body data-base="${base}" data-view="check">
<header class="bar"><span class="brand">${t("console.brand")}</span></header>
<main id="main">
<h1>${t("console.signin.title")}</h1>
${pending ? html`<p class="card notice" role="status">${t("console.signin.pending")}</p>` : null}
<p>${t("console.signin.opened")}</p>
<p><a class="button" id="open-check" href="${started.url}" target="_blank" rel="noopener">${t("console.signin.open")}</a></p>
<form method="post" action="${base}/sign-in/finish">
<input type="hidden" name="session_id" value="${started.session_id}">
<input type="hidden" name="url" value="${started.url}">
<button type="submit" id="continue" class="secondary">${t("console.signin.continue")}</button>
</form>
</main>
</body>
</html>
`.text;
}

// ---------------------------------------------------------------------------------------------
// Pieces
// ---------------------------------------------------------------------------------------------

/** A table of `rows`, or a line saying there is nothing yet. */
export function table(t: ReturnType<typeof words>, headers: string[], rows: Html[][], caption?: string): Html {
  if (rows.length === 0) return html`<p class="muted">${t("console.none")}</p>`;
  // At a phone's width each row is a card (CONSOLE_CSS): the roles keep the table's semantics, which
  // browsers drop from a table no longer displayed as one, and each cell names its column (data-label).
  return html`<div class="table"><table role="table">${caption ? html`<caption class="muted">${caption}</caption>` : null}<thead role="rowgroup"><tr role="row">${headers.map(
    (h) => html`<th scope="col" role="columnheader">${h}</th>`,
  )}</tr></thead><tbody role="rowgroup">${rows.map(
    (cells) => html`<tr role="row">${cells.map((cell, i) => html`<td role="cell" data-label="${headers[i] ?? ""}">${cell}</td>`)}</tr>`,
  )}</tbody></table></div>`;
}

/** A value shown once, with a copy button the script reveals. */
export function shownOnce(t: ReturnType<typeof words>, label: MessageKey, id: string, value: string): Html {
  return html`<div class="card notice" role="status"><p>${t(label)}</p><p class="secret" id="${id}">${value}</p><button type="button" class="secondary" data-copy="${id}" hidden>Copy</button></div>`;
}

/** An instant as the locale writes it, in UTC. */
export function when(locale: Locale, iso: unknown): string {
  if (typeof iso !== "string" || !iso) return "—";
  return new Intl.DateTimeFormat(locale, { dateStyle: "medium", timeStyle: "short", timeZone: "UTC" }).format(new Date(iso));
}

/** The next page's link, when there is one. */
export function nextLink(t: ReturnType<typeof words>, href: string, cursor: string | null | undefined, query: Row = {}): Html {
  if (!cursor) return html``;
  const params = new URLSearchParams({ ...Object.fromEntries(Object.entries(query).filter(([, v]) => typeof v === "string")), cursor });
  return html`<p><a href="${href}?${params.toString()}">${t("console.next")}</a></p>`;
}

/**
 * The checks per day as a bar chart drawn on the server (completed and failed stacked, one bar a
 * day), with a text summary for a screen reader; no script, no library.
 */
export function checksChart(t: ReturnType<typeof words>, days: { day: string; completed: number; failed: number }[]): Html {
  const width = 600;
  const height = 160;
  const max = Math.max(1, ...days.map((d) => d.completed + d.failed));
  const step = width / Math.max(1, days.length);
  const bar = Math.max(2, step - 4);
  const scale = (n: number) => (n / max) * (height - 20);
  const totals = days.reduce((a, d) => ({ completed: a.completed + d.completed, failed: a.failed + d.failed }), {
    completed: 0,
    failed: 0,
  });
  // the busiest day's own count (the scale's floor of 1 keeps an empty chart's bars at zero height, not its words)
  const busiest = Math.max(0, ...days.map((d) => d.completed + d.failed));
  // a label followed by its count: no plural to agree with the number (pt-BR "1 verificações")
  const summary = t("console.overview.chart", { ...totals, max: busiest });
  return html`<figure class="card"><svg class="chart" viewBox="0 0 ${width} ${height}" role="img" aria-label="${summary}">
${days.map((d, i) => {
  const x = (i * step + 2).toFixed(1);
  const c = scale(d.completed);
  const f = scale(d.failed);
  return html`<rect class="completed" x="${x}" y="${(height - 14 - c).toFixed(1)}" width="${bar.toFixed(1)}" height="${c.toFixed(1)}"><title>${d.day}: ${d.completed}</title></rect><rect class="failed" x="${x}" y="${(height - 14 - c - f).toFixed(1)}" width="${bar.toFixed(1)}" height="${f.toFixed(1)}"><title>${d.day}: ${d.failed}</title></rect>`;
})}
${days.length ? html`<text x="0" y="${height - 2}">${days[0].day}</text><text x="${width}" y="${height - 2}" text-anchor="end">${days[days.length - 1].day}</text>` : null}
</svg><figcaption class="legend"><span><span class="swatch ok"></span> ${t("console.overview.completed")}</span><span><span class="swatch bad"></span> ${t("console.overview.failed")}</span><p class="muted">${summary}</p></figcaption></figure>`;
}
