/**
 * The claim catalogue of disclose-claims (spec 4.5): which fields a merchant can ask about a person,
 * how each may be disclosed, and how each is resolved from what the service holds. A `value` is the
 * field itself; a `zk_proof` is a boolean predicate the service derives and signs (its source, a
 * birth date for instance, never leaves the service); a `document` is a record put behind the
 * consent token, of which the SD-JWT carries only the digest. Pure: no I/O.
 */
import { ageOn } from "../identity/mrz";
import { ApiError } from "../kernel/errors";
import type { DisclosureSubject } from "./rpc";

export const disclosureTypes = ["value", "zk_proof", "document"] as const;
export type DisclosureType = (typeof disclosureTypes)[number];

/** A requested field as the request carries it (spec 4.5 requestedFields[]). */
export interface RequestedField {
  key: string;
  disclosure_type: DisclosureType;
  requires_kyc?: boolean;
  circuit_id?: string;
  public_input?: Record<string, unknown>;
}

/** Why a known field could not be answered for this person. */
type Unavailable = "no_document" | "no_birth_date";

export type ResolvedClaim =
  | { key: string; disclosure_type: "value"; status: "disclosed"; value: string }
  | {
      key: string;
      disclosure_type: "zk_proof";
      status: "disclosed";
      zk_proof: { circuit_id: string; public_input: Record<string, unknown>; result: boolean };
    }
  | { key: string; disclosure_type: "document"; status: "disclosed"; document: Record<string, unknown> }
  | { key: string; disclosure_type: DisclosureType; status: "unavailable"; reason: Unavailable };

type Document = NonNullable<DisclosureSubject["document"]>;

/** The value fields: each from the subject or its verified document. */
const valueFields: Record<string, (subject: DisclosureSubject) => string | Unavailable> = {
  subject_ref: (subject) => subject.subject_ref,
  assurance_level: (subject) => subject.assurance_level,
  enrolled_on: (subject) => new Date(subject.enrolled_at).toISOString().slice(0, 10),
  document_type: (subject) => subject.document?.document_type ?? "no_document",
  issuing_country: (subject) => subject.document?.issuing_country ?? "no_document",
  document_expires_on: (subject) => subject.document?.expires_on ?? "no_document",
};

/** The document fields: records disclosed behind the consent token. */
const documentFields: Record<string, (document: Document) => Record<string, unknown>> = {
  identity_document: (document) => ({
    document_type: document.document_type,
    issuing_country: document.issuing_country,
    expires_on: document.expires_on,
    verified_at: document.verified_at,
    portrait_similarity: document.portrait_similarity,
  }),
};

const AGE_OVER = /^age_over_([1-9][0-9]?|1[0-4][0-9]|150)$/;
/** An issuing state as the MRZ of a verified document writes it: ICAO 9303 three letters (D for Germany). */
const COUNTRY = /^(?:[A-Z]{3}|D)$/;
const MAX_COUNTRIES = 50;

/** A zk_proof field's circuit and its public input, checked against what the request says of them. */
function circuitOf(field: RequestedField): { circuit_id: string; public_input: Record<string, unknown> } | null {
  const age = AGE_OVER.exec(field.key);
  if (age) {
    const threshold = Number(age[1]);
    const given = field.public_input?.threshold;
    if (given !== undefined && given !== threshold) throw circuitError(field);
    return { circuit_id: "age_over", public_input: { threshold } };
  }
  if (field.key === "document_valid") return { circuit_id: "document_valid", public_input: {} };
  if (field.key === "issuing_country_in") {
    const countries = field.public_input?.countries;
    const valid =
      Array.isArray(countries) &&
      countries.length >= 1 &&
      countries.length <= MAX_COUNTRIES &&
      countries.every((code) => typeof code === "string" && COUNTRY.test(code));
    if (!valid) throw circuitError(field);
    return { circuit_id: "issuing_country_in", public_input: { countries: [...new Set(countries as string[])].sort() } };
  }
  return null;
}

function circuitError(field: RequestedField): ApiError {
  return new ApiError("INVALID_CIRCUIT", { key: field.key });
}

/** The zk_proof fields: `age_over_N` (N from 1 to 150), `document_valid`, `issuing_country_in`. */
function isZkKey(key: string): boolean {
  return AGE_OVER.test(key) || key === "document_valid" || key === "issuing_country_in";
}

/**
 * Checks a request's fields against the catalogue before anything is read: an unknown key is
 * `400 UNKNOWN_CLAIM`, a known key asked another way `400 DISCLOSURE_TYPE_NOT_SUPPORTED`, a circuit
 * that does not fit (an `age_over_N` past 150 included) `400 INVALID_CIRCUIT`. Each names the `key`.
 */
export function checkRequestedFields(fields: readonly RequestedField[]): void {
  for (const field of fields) {
    const { key } = field;
    if (/^age_over_\d+$/.test(key) && !AGE_OVER.test(key)) throw circuitError(field);
    if (!(key in valueFields || key in documentFields || isZkKey(key))) throw new ApiError("UNKNOWN_CLAIM", { key });
    const supported =
      field.disclosure_type === "value" ? key in valueFields : field.disclosure_type === "document" ? key in documentFields : isZkKey(key);
    if (!supported) throw new ApiError("DISCLOSURE_TYPE_NOT_SUPPORTED", { key });
    if (field.disclosure_type !== "zk_proof") {
      if (field.circuit_id !== undefined || field.public_input !== undefined) throw circuitError(field);
    } else {
      const circuit = circuitOf(field);
      if (field.circuit_id !== undefined && field.circuit_id !== circuit?.circuit_id) throw circuitError(field);
    }
  }
}

/** Resolves one checked field for `subject` on `today` (YYYY-MM-DD, UTC). */
export function resolveClaim(field: RequestedField, subject: DisclosureSubject, today: string): ResolvedClaim {
  const { key } = field;
  const unavailable = (reason: Unavailable): ResolvedClaim => ({
    key,
    disclosure_type: field.disclosure_type,
    status: "unavailable",
    reason,
  });
  if (field.disclosure_type === "value") {
    const value = valueFields[key](subject);
    return value === "no_document" ? unavailable(value) : { key, disclosure_type: "value", status: "disclosed", value };
  }
  if (field.disclosure_type === "document") {
    if (!subject.document) return unavailable("no_document");
    return { key, disclosure_type: "document", status: "disclosed", document: documentFields[key](subject.document) };
  }
  const circuit = circuitOf(field)!;
  const { document } = subject;
  let result: boolean;
  if (circuit.circuit_id === "document_valid") result = document !== null;
  else if (!document) return unavailable("no_document");
  else if (circuit.circuit_id === "issuing_country_in")
    result = (circuit.public_input.countries as string[]).includes(document.issuing_country);
  else if (!document.date_of_birth) return unavailable("no_birth_date");
  else result = ageOn(document.date_of_birth, today) >= (circuit.public_input.threshold as number);
  return { key, disclosure_type: "zk_proof", status: "disclosed", zk_proof: { ...circuit, result } };
}
