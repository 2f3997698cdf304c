/**
 * The console's style sheet and its one script (D-623): served by the function itself from this
 * origin, so the page's policy allows `'self'` and nothing else. The pages work without the
 * script (every action is an HTML form); it adds only what a form cannot do: reading a logo file to
 * upload it as /v1's JSON takes it, and copying a secret shown once.
 */

export const CONSOLE_CSS = `
:root { color-scheme: light dark; --bg: #f7f7f8; --fg: #17181c; --muted: #555a66; --card: #fff; --line: #d5d7de;
  --accent: #1d4ed8; --accent-fg: #fff; --danger: #b42318; --ok: #067647; --test: #8a4b00; --test-bg: #fff3d6;
  --live: #0b5d2a; --live-bg: #dff5e6; --focus: #1d4ed8; font: 16px/1.5 system-ui, -apple-system, "Segoe UI", Roboto, sans-serif; }
@media (prefers-color-scheme: dark) { :root { --bg: #111216; --fg: #eceef3; --muted: #a8adba; --card: #1b1d23; --line: #343844;
  --accent: #8ab4ff; --accent-fg: #0b1020; --danger: #ff8a80; --ok: #6fdc9a; --test: #ffd68a; --test-bg: #3a2a06;
  --live: #8ff0b0; --live-bg: #0d3320; --focus: #8ab4ff; } }
* { box-sizing: border-box; }
body { margin: 0; background: var(--bg); color: var(--fg); }
a { color: var(--accent); }
:focus-visible { outline: 3px solid var(--focus); outline-offset: 2px; }
.skip { position: absolute; left: -999px; top: 0; background: var(--card); padding: .5rem 1rem; }
.skip:focus { left: .5rem; z-index: 10; }
.bar { display: flex; flex-wrap: wrap; gap: .5rem 1rem; align-items: center; padding: .75rem 1rem; background: var(--card); border-bottom: 1px solid var(--line); }
.brand { font-weight: 700; }
.mode { font-weight: 700; padding: .15rem .6rem; border-radius: 999px; }
.mode-test { color: var(--test); background: var(--test-bg); }
.mode-live { color: var(--live); background: var(--live-bg); }
.who { color: var(--muted); flex: 1 1 12rem; }
.bar form { display: inline; margin: 0; }
nav ul { list-style: none; display: flex; flex-wrap: wrap; gap: .25rem; margin: 0; padding: .5rem 1rem; border-bottom: 1px solid var(--line); }
nav a { display: inline-block; padding: .35rem .7rem; border-radius: .4rem; text-decoration: none; }
nav a[aria-current="page"] { background: var(--accent); color: var(--accent-fg); }
main { max-width: 72rem; margin: 0 auto; padding: 1rem; }
h1 { font-size: 1.6rem; margin: .5rem 0 1rem; overflow-wrap: anywhere; }
td code, dd code { overflow-wrap: anywhere; }
h2 { font-size: 1.2rem; margin: 1.5rem 0 .5rem; }
.card { background: var(--card); border: 1px solid var(--line); border-radius: .6rem; padding: 1rem; margin: 0 0 1rem; }
.notice { border-left: 4px solid var(--ok); }
.error { border-left: 4px solid var(--danger); }
.secret { font: 1rem/1.4 ui-monospace, monospace; word-break: break-all; user-select: all; }
.muted { color: var(--muted); }
.table { width: 100%; overflow-x: auto; }
table { border-collapse: collapse; width: 100%; background: var(--card); }
th, td { text-align: left; padding: .45rem .6rem; border-bottom: 1px solid var(--line); vertical-align: top; }
th { font-size: .85rem; color: var(--muted); }
code, pre { font-family: ui-monospace, monospace; font-size: .9rem; }
pre { background: var(--card); border: 1px solid var(--line); padding: .75rem; overflow: auto; max-height: 24rem; }
form.inline { display: inline-flex; flex-wrap: wrap; gap: .4rem; align-items: end; margin: .15rem 0; }
.fields { display: grid; gap: .75rem; grid-template-columns: repeat(auto-fit, minmax(14rem, 1fr)); align-items: end; }
label { display: grid; gap: .25rem; font-weight: 600; }
fieldset { border: 1px solid var(--line); border-radius: .5rem; }
input, select, textarea { font: inherit; color: var(--fg); background: var(--bg); border: 1px solid var(--line); border-radius: .4rem; padding: .45rem .6rem; min-width: 0; }
textarea { width: 100%; min-height: 16rem; font-family: ui-monospace, monospace; font-size: .9rem; }
button, .button { font: inherit; font-weight: 600; border: 1px solid var(--accent); background: var(--accent); color: var(--accent-fg); border-radius: .4rem; padding: .45rem .9rem; cursor: pointer; text-decoration: none; display: inline-block; }
button.secondary { background: transparent; color: var(--accent); }
/* The same red in both schemes: white on it keeps its contrast (the dark scheme's --danger is for text). */
button.danger { background: #b42318; border-color: #b42318; color: #fff; }
.chart { width: 100%; height: auto; max-width: 48rem; }
.chart .completed { fill: var(--ok); }
.chart .failed { fill: var(--danger); }
.chart text { fill: var(--muted); font-size: 10px; }
.legend span { margin-right: 1rem; }
.swatch { display: inline-block; width: 1rem; height: 1rem; border: 1px solid var(--line); vertical-align: middle; }
.swatch.ok { background: var(--ok); }
.swatch.bad { background: var(--danger); }
.preview { display: grid; gap: 1rem; grid-template-columns: repeat(auto-fit, minmax(18rem, 1fr)); }
.preview figure { margin: 0; }
.preview figcaption { font-weight: 600; margin-bottom: .25rem; }
.preview iframe { width: 100%; height: 42rem; border: 1px solid var(--line); border-radius: .6rem; background: var(--card); }
@media (max-width: 40rem) { .bar { padding: .5rem; } main { padding: .5rem; } th, td { padding: .35rem; } }
/* A phone's width: each row a card, each cell under its column's name (views.ts's table), no sideways scrolling. */
@media (max-width: 40rem) {
  .table table, .table thead, .table tbody, .table tr, .table th, .table td { display: block; }
  .table table { background: transparent; }
  .table thead tr { position: absolute; width: 1px; height: 1px; overflow: hidden; clip-path: inset(50%); white-space: nowrap; }
  .table tr { background: var(--card); border: 1px solid var(--line); border-radius: .6rem; margin: 0 0 .75rem; }
  .table td { border-bottom: 1px solid var(--line); overflow-wrap: anywhere; }
  .table td:last-child { border-bottom: 0; }
  .table td::before { content: attr(data-label); display: block; font-size: .85rem; font-weight: 600; color: var(--muted); }
  .table td[data-label=""]::before { content: none; }
  .table pre { max-width: 100%; }
}
`;

export const CONSOLE_JS = `
const csrf = document.querySelector('meta[name="csrf-token"]')?.getAttribute("content") ?? "";
const base = document.body.dataset.base ?? "";
const upload = document.getElementById("upload");
if (upload) {
  upload.hidden = false;
  document.getElementById("upload-needs-script")?.remove();
  upload.addEventListener("submit", async (event) => {
    event.preventDefault();
    const status = document.getElementById("upload-status");
    const file = upload.querySelector('input[type="file"]').files[0];
    if (!file) return;
    const data = await new Promise((resolve, reject) => {
      const reader = new FileReader();
      reader.onload = () => resolve(String(reader.result).slice(String(reader.result).indexOf(",") + 1));
      reader.onerror = reject;
      reader.readAsDataURL(file);
    });
    const answer = await fetch(base + "/theme/assets", {
      method: "POST",
      headers: { "content-type": "application/json", "x-csrf-token": csrf },
      body: JSON.stringify({ kind: "logo", content_type: file.type, data }),
    });
    const body = await answer.json().catch(() => ({}));
    if (answer.ok) location.assign(base + "/theme?uploaded=" + encodeURIComponent(body.id));
    else status.textContent = body.error ?? String(answer.status);
  });
}
for (const button of document.querySelectorAll("button[data-copy]")) {
  button.hidden = false;
  button.addEventListener("click", () => navigator.clipboard?.writeText(document.getElementById(button.dataset.copy).textContent));
}
`;
