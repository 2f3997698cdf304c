/**
 * Adding a device by the approval of one already registered (docs/devices.md, "Adding a device";
 * D-370): the new device registers a passkey over an add_device challenge, which the service
 * verifies but gives to nobody yet (an addition, `pending`), and shows an approval code as a QR
 * code (as a handoff does); a registered device of the person scans it, reads what it approves,
 * and signs an add_device assertion over the addition and the new credential; the service then
 * registers the credential as that person's (`approved`). Not approved within its ttl, it is
 * `expired`. The approval code is 32 random bytes; only its SHA-256 is stored.
 */
import { renderSVG } from "uqr";
import * as v from "valibot";
import { approvalDigest, DEVICE_APPROVAL_CONTEXT, descriptorDigest } from "../contracts/device";
import { described } from "../kernel/answers";
import { rpc } from "../kernel/db/rpc";
import type { Deps } from "../kernel/deps";
import { ApiError, type ErrorCode } from "../kernel/errors";
import type { Tenant } from "../kernel/principal";
import { jsonObject, ttlSeconds } from "../kernel/validation";
import { randomBase64Url, sha256Hex } from "../lib/crypto";
import { canonicalUuid } from "../lib/uuid";
import { deviceAssertionOptions, verifyDeviceAssertion } from "./assertion";
import type { RelyingParty } from "./ceremony";
import { issueDeviceChallenge, recordUserHandle } from "./challenges";
import { deviceView, deviceViewSchema } from "./devices";
import { deviceBindingOf, deviceIdOf, deviceRef } from "./policy";
import { deviceRegistrationOptions, USER_HANDLE_BYTES, verifyRegistration } from "./registration";
import type { DeviceAdditionRow } from "./rpc";

/** How long an addition waits for its approval: five minutes by default, 30 s to 10 min (D-370). */
export const DEVICE_ADDITION_TTL_SECONDS = { default: 300, min: 30, max: 600 } as const;
const APPROVAL_CODE = /^dac_[A-Za-z0-9_-]{43}$/;
const challenge = v.pipe(v.string(), v.regex(/^[A-Za-z0-9_-]{43}$/, "an issued challenge (43 characters of base64url)"));
const digest = v.pipe(v.string(), v.regex(/^[0-9a-f]{64}$/, "a SHA-256 digest in lowercase hex"));
const approvalCode = v.pipe(v.string(), v.minLength(1), v.maxLength(256));

/** device-add/options: the challenge the new device got (device-challenge, purpose add_device), and what it covers. */
export const additionOptionsSchema = v.pipe(
  jsonObject,
  v.strictObject({
    challenge,
    descriptor_digest: v.optional(digest),
    user_name: v.optional(v.pipe(v.string(), v.minLength(1), v.maxLength(64))),
  }),
);

/** device-add/request: the new device's registration over DEVICE_APPROVAL_CONTEXT. */
export const requestAdditionSchema = v.pipe(
  jsonObject,
  v.strictObject({
    challenge,
    registration: v.record(v.string(), v.unknown()),
    ttl_seconds: ttlSeconds(DEVICE_ADDITION_TTL_SECONDS, "INVALID_INPUT"),
  }),
);

export const additionStatusSchema = v.object({ addition_id: v.pipe(v.string(), v.minLength(1), v.maxLength(64)) });
export const lookupAdditionSchema = v.pipe(jsonObject, v.strictObject({ approval_code: approvalCode }));
export const approveAdditionSchema = v.pipe(
  jsonObject,
  v.strictObject({ approval_code: approvalCode, challenge, assertion: v.record(v.string(), v.unknown()) }),
);

/** What the routes that take a device's ceremony can be refused with. */
export const additionCodes = ["UNAUTHORIZED_DEVICE", "DEVICE_ADDITION_INVALID"] as const satisfies readonly ErrorCode[];

/** Where the registered device lands: the approval page, with the code in the fragment (never sent to a server by the browser). */
export function approvalUrl(baseUrl: string, code: string): string {
  return `${baseUrl}/functions/v1/device-add/approve#${code}`;
}

/** A refusal of a device's ceremony as the functions answer it (docs/devices.md, "Refusals"). */
function unauthorized(reason: string): ApiError {
  return new ApiError("UNAUTHORIZED_DEVICE", { reason });
}

/** An addition as its merchant and the new device read it. */
function additionView(row: DeviceAdditionRow) {
  return {
    addition_id: row.addition_id,
    state: row.state,
    created_at: new Date(row.created_at).toISOString(),
    expires_at: new Date(row.expires_at).toISOString(),
    approved_at: row.approved_at === null ? null : new Date(row.approved_at).toISOString(),
    device: row.device ? deviceView(row.device) : null,
  };
}

/**
 * The options of navigator.credentials.create for a new device (deviceRegistrationOptions): the
 * WebAuthn challenge covers `descriptor_digest` (a re-proof's capture) or, without it, the approval
 * context. The challenge was issued by device-challenge (add_device) and must still be open; the
 * options' user handle is recorded with it (the first options asked for it keep theirs), so the
 * credential the registration makes keeps the handle, as an enrolment's does (D-485, D-561).
 */
export async function additionOptions(deps: Deps, tenant: Tenant, rp: RelyingParty, body: v.InferOutput<typeof additionOptionsSchema>) {
  const recorded = await recordUserHandle(deps, tenant, "add_device", body.challenge, randomBase64Url(USER_HANDLE_BYTES));
  if (!recorded.ok) throw unauthorized(recorded.reason);
  const covered = body.descriptor_digest ?? (await descriptorDigest(DEVICE_APPROVAL_CONTEXT));
  return {
    options: await deviceRegistrationOptions(rp, {
      challenge: body.challenge,
      descriptorDigest: covered,
      userName: body.user_name ?? "New device",
      userHandle: recorded.userHandle,
    }),
  };
}

/**
 * The new device asks to be added: its registration is verified now (the add_device challenge
 * consumed, origin, RP ID, user verification, attestation) and kept as a pending addition. Answers
 * the addition, the approval code, the approval page's URL and that URL as a QR code.
 */
export async function requestAddition(
  deps: Deps,
  tenant: Tenant,
  rp: RelyingParty,
  baseUrl: string,
  body: v.InferOutput<typeof requestAdditionSchema>,
) {
  const verified = await verifyRegistration(deps, tenant, {
    purpose: "add_device",
    challenge: body.challenge,
    descriptorDigest: await descriptorDigest(DEVICE_APPROVAL_CONTEXT),
    response: body.registration,
    rp,
  });
  if (!verified.ok) throw unauthorized(verified.reason);
  const code = `dac_${randomBase64Url(32)}`;
  const created = await rpc(deps.sql, "device_addition_create", {
    id: crypto.randomUUID(),
    merchant_id: tenant.merchantId,
    environment: tenant.environment,
    now: deps.now.toISOString(),
    code_hash: await sha256Hex(code),
    registration: verified.registration,
    credential_id: verified.registration.credential_id,
    ttl_seconds: body.ttl_seconds,
  });
  if (!created.created) throw unauthorized(created.reason);
  const url = approvalUrl(baseUrl, code);
  return { ...additionView(created.addition), approval_code: code, url, qr_svg: renderSVG(url, { ecc: "M", border: 2, pixelSize: 6 }) };
}

/** The new device's poll: the addition's state, and the device once approved; another merchant's or unknown `404 not_found`. */
export async function additionStatus(deps: Deps, tenant: Tenant, additionId: string) {
  const uuid = canonicalUuid(additionId.startsWith("dad_") ? additionId.slice(4) : additionId);
  const row = uuid
    ? await rpc(deps.sql, "device_addition_get", {
        addition_id: uuid,
        merchant_id: tenant.merchantId,
        environment: tenant.environment,
        now: deps.now.toISOString(),
      })
    : null;
  if (!row) throw new ApiError("not_found");
  return additionView(row);
}

/** The pending addition an approval code names, or `404 DEVICE_ADDITION_INVALID` (unknown, approved and expired read alike). */
async function pendingAddition(deps: Deps, code: string): Promise<DeviceAdditionRow & { tenant: Tenant }> {
  if (!APPROVAL_CODE.test(code)) throw new ApiError("DEVICE_ADDITION_INVALID");
  const row = await rpc(deps.sql, "device_addition_get", { code_hash: await sha256Hex(code), now: deps.now.toISOString() });
  if (row?.state !== "pending") throw new ApiError("DEVICE_ADDITION_INVALID");
  return { ...row, tenant: { merchantId: row.merchant_id, environment: row.environment } };
}

/** What the approving device is shown and signs: the addition and the new credential (approvalDigest). */
async function digestOf(row: DeviceAdditionRow): Promise<string> {
  return approvalDigest({
    addition_id: row.addition_id,
    credential_id: row.credential_id,
    key_thumbprint: row.registration.key_thumbprint ?? "",
  });
}

/**
 * The registered device reads the addition its QR code names (the code is the credential): what the
 * new device is (attestation, binding, transports), when it expires, and a fresh add_device
 * challenge with the assertion options whose WebAuthn challenge covers approvalDigest.
 */
export async function lookupAddition(deps: Deps, rp: RelyingParty, body: v.InferOutput<typeof lookupAdditionSchema>) {
  const row = await pendingAddition(deps, body.approval_code);
  const issued = await issueDeviceChallenge(deps, row.tenant, "add_device");
  const approval_digest = await digestOf(row);
  const { registration } = row;
  return {
    addition_id: row.addition_id,
    state: row.state,
    expires_at: new Date(row.expires_at).toISOString(),
    new_device: {
      device_binding: deviceBindingOf(registration),
      attestation: { format: registration.attestation_format, verdict: registration.attestation_verdict },
      aaguid: registration.aaguid,
      backup_eligible: registration.backup_eligible,
      transports: registration.transports,
    },
    challenge: issued.challenge,
    approval_digest,
    options: await deviceAssertionOptions(rp, { challenge: issued.challenge, descriptorDigest: approval_digest }),
  };
}

/**
 * The registered device approves: its add_device assertion over approvalDigest must verify as a
 * registered, unrevoked device's (verifyDeviceAssertion: the challenge consumed whatever follows),
 * and then the new credential becomes that device's person's, with device.registered, in one RPC.
 * Refused signatures are `403 UNAUTHORIZED_DEVICE` with `reason`; an addition no longer pending `404
 * DEVICE_ADDITION_INVALID`.
 */
export async function approveAddition(deps: Deps, rp: RelyingParty, body: v.InferOutput<typeof approveAdditionSchema>) {
  const row = await pendingAddition(deps, body.approval_code);
  const credentialId = typeof body.assertion.id === "string" ? body.assertion.id : "";
  const { device: approver } = await rpc(deps.sql, "device_credential_get", {
    environment: row.tenant.environment,
    credential_id: credentialId,
  });
  // An unknown credential is still tried, against nobody: the challenge is consumed and the refusal named.
  const verified = await verifyDeviceAssertion(deps, row.tenant, {
    identityId: approver?.identity_id ?? "00000000-0000-0000-0000-000000000000",
    purpose: "add_device",
    challenge: body.challenge,
    descriptorDigest: await digestOf(row),
    response: body.assertion,
    rp,
  });
  if (!verified.ok) throw unauthorized(verified.reason);
  const approved = await rpc(deps.sql, "device_addition_approve", {
    code_hash: await sha256Hex(body.approval_code),
    merchant_id: row.tenant.merchantId,
    environment: row.tenant.environment,
    now: deps.now.toISOString(),
    approver_device_id: deviceIdOf(verified.device_id)!,
    identity_id: approver!.identity_id,
    device_id: crypto.randomUUID(),
    device_binding: deviceBindingOf(row.registration),
  });
  if (!approved.approved) {
    if (approved.reason.startsWith("addition_")) throw new ApiError("DEVICE_ADDITION_INVALID");
    throw unauthorized(approved.reason);
  }
  return { ...additionView(approved.addition), approved_by: deviceRef(approver!.device_id) };
}

const isoTimestamp = v.pipe(v.string(), v.isoTimestamp());

/** An addition as the new device and its merchant read it. */
export const additionSchema = v.object({
  addition_id: described(v.pipe(v.string(), v.regex(/^dad_[0-9a-f]{32}$/)), "The addition (dad_ + 32 hex)."),
  state: described(
    v.picklist(["pending", "approved", "expired"]),
    "pending until a registered device approves it, then approved (or expired).",
  ),
  created_at: isoTimestamp,
  expires_at: isoTimestamp,
  approved_at: v.nullable(isoTimestamp),
  device: described(v.nullable(deviceViewSchema), "The device registered by the approval."),
});

/** A requested addition: its state, the approval code, the approval page's URL and that URL as a QR code (SVG). */
export const requestedAdditionSchema = v.object({
  ...additionSchema.entries,
  approval_code: described(v.pipe(v.string(), v.startsWith("dac_")), "The one-time approval code (in the url)."),
  url: described(v.pipe(v.string(), v.url()), "What the registered device opens."),
  qr_svg: described(v.string(), "The url as a QR code, an SVG image."),
});

export const approvedAdditionSchema = v.object({
  ...additionSchema.entries,
  approved_by: described(v.pipe(v.string(), v.regex(/^dev_[0-9a-f]{32}$/)), "The registered device that approved it."),
});

export const additionLookupSchema = v.object({
  addition_id: v.string(),
  state: v.literal("pending"),
  expires_at: isoTimestamp,
  new_device: described(
    v.record(v.string(), v.unknown()),
    "What the new device said of itself: binding, attestation, AAGUID, flags, transports.",
  ),
  challenge: described(v.string(), "An add_device challenge for the approving device (two minutes)."),
  approval_digest: described(v.string(), "approvalDigest of the addition: what the assertion's challenge covers."),
  options: described(v.record(v.string(), v.unknown()), "navigator.credentials.get options (startAuthentication)."),
});

export const additionOptionsAnswerSchema = v.object({
  options: described(v.record(v.string(), v.unknown()), "navigator.credentials.create options (startRegistration)."),
});
