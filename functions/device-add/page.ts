/**
 * The approval page (GET /functions/v1/device-add/approve#dac_…): what a registered device opens
 * from the new device's QR code. It runs on the service's own origin, so the passkey ceremony is
 * first-party (the RP ID is the service's); it reads the approval code from the fragment (never
 * sent to a server by the browser), shows what the new device said of itself, and on the person's
 * tap signs the add_device challenge with navigator.credentials.get (user verification required)
 * and posts the assertion to /approve. Its script is a file of its own (script-src 'self'); the
 * page loads nothing from another host and cannot be framed.
 */

const CONTENT_SECURITY_POLICY =
  "default-src 'none'; script-src 'self'; connect-src 'self'; style-src 'self'; img-src 'self'; base-uri 'none'; form-action 'none'; frame-ancestors 'none'";

/** The headers of the page and its script. */
export function approvalPageHeaders(contentType: string): Record<string, string> {
  return {
    "content-type": contentType,
    "content-security-policy": CONTENT_SECURITY_POLICY,
    "x-content-type-options": "nosniff",
    "referrer-policy": "no-referrer",
  };
}

export const APPROVAL_PAGE = `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>Approve a new device</title>
<script src="approve.js" defer></script>
</head>
<body>
<main>
<h1>Approve a new device</h1>
<p id="state" role="status">Reading the request…</p>
<dl id="details" hidden>
<dt>Kind of key</dt><dd id="binding"></dd>
<dt>Attestation</dt><dd id="attestation"></dd>
<dt>Expires</dt><dd id="expires"></dd>
</dl>
<p>Approve only a device you are holding yourself, right now. It will sign in as you.</p>
<button id="approve" type="button" disabled>Approve with this device</button>
</main>
</body>
</html>
`;

export const APPROVAL_SCRIPT = `"use strict";
(() => {
  const base = location.pathname.replace(/\\/approve$/, "");
  const code = location.hash.slice(1);
  const $ = (id) => document.getElementById(id);
  const say = (text) => { $("state").textContent = text; };
  const bytes = (b64url) => Uint8Array.from(atob(b64url.replace(/-/g, "+").replace(/_/g, "/")), (c) => c.charCodeAt(0));
  const b64url = (buffer) => btoa(String.fromCharCode(...new Uint8Array(buffer))).replace(/\\+/g, "-").replace(/\\//g, "_").replace(/=+$/, "");
  const post = (path, body) => fetch(base + path, { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify(body) })
    .then(async (res) => ({ ok: res.ok, body: await res.json() }));
  let lookup = null;
  async function start() {
    if (!/^dac_[A-Za-z0-9_-]{43}$/.test(code)) return say("This link holds no approval code.");
    const res = await post("/lookup", { approval_code: code });
    if (!res.ok) return say(res.body.code === "DEVICE_ADDITION_INVALID" ? "This request was already approved, or has expired." : "This request cannot be read.");
    lookup = res.body;
    $("binding").textContent = lookup.new_device.device_binding === "hardware" ? "Bound to its hardware" : "A passkey that may sync";
    $("attestation").textContent = lookup.new_device.attestation.verdict;
    $("expires").textContent = new Date(lookup.expires_at).toLocaleTimeString();
    $("details").hidden = false;
    $("approve").disabled = false;
    say("A new device asks to be added to your account.");
  }
  async function approve() {
    $("approve").disabled = true;
    const options = lookup.options;
    try {
      const credential = await navigator.credentials.get({
        publicKey: {
          challenge: bytes(options.challenge),
          rpId: options.rpId,
          timeout: options.timeout,
          userVerification: "required",
          allowCredentials: (options.allowCredentials || []).map((c) => ({ type: "public-key", id: bytes(c.id) })),
        },
      });
      const r = credential.response;
      const assertion = {
        id: credential.id, rawId: b64url(credential.rawId), type: "public-key",
        response: {
          clientDataJSON: b64url(r.clientDataJSON), authenticatorData: b64url(r.authenticatorData), signature: b64url(r.signature),
          ...(r.userHandle ? { userHandle: b64url(r.userHandle) } : {}),
        },
        clientExtensionResults: {},
        ...(credential.authenticatorAttachment ? { authenticatorAttachment: credential.authenticatorAttachment } : {}),
      };
      const res = await post("/approve", { approval_code: code, challenge: lookup.challenge, assertion });
      say(res.ok ? "Approved: the new device is yours." : "Not approved (" + (res.body.reason || res.body.code) + ").");
      document.body.dataset.outcome = res.ok ? "approved" : (res.body.reason || res.body.code);
    } catch (error) {
      say("Not approved: " + error.name + ".");
      document.body.dataset.outcome = error.name;
    }
  }
  $("approve").addEventListener("click", approve);
  start().catch(() => say("This request cannot be read."));
})();
`;
