/**
 * The machine-readable zone of an eMRTD as its chip holds it in EF.DG1 (ICAO 9303 parts 4 to 6 and
 * 10): what the service keeps of it is the document's kind, issuing state, expiry and the holder's
 * date of birth. The check digits are verified: DG1 is signed, but a chip's MRZ whose digits do not
 * add up is not a document this service will read.
 */

/** The kinds of document an eMRTD can be: TD3 passports, TD1/TD2 identity cards and residence permits. */
export const documentTypes = ["passport", "national_id", "residence_permit"] as const;
export type DocumentType = (typeof documentTypes)[number];

export interface MachineReadableZone {
  document_type: DocumentType;
  /** The issuing state's ICAO code (ISO 3166-1 alpha-3, or an ICAO code such as `D` or `UTO`), fillers removed. */
  issuing_country: string;
  /** ISO date; expiries are in 2000-2099. */
  expires_on: string;
  /** ISO date, or null when the document leaves part of it unknown (`<`). */
  date_of_birth: string | null;
}

export class MrzError extends Error {}

/** Where the fields are in each format: [start, end) of the field, and the index of its check digit. */
const LAYOUTS = {
  88: { state: 2, birth: 57, expiry: 65 }, // TD3: two lines of 44
  90: { state: 2, birth: 30, expiry: 38 }, // TD1: three lines of 30
  72: { state: 2, birth: 49, expiry: 57 }, // TD2: two lines of 36
} as const;

/** The MRZ (tag 5F1F) inside EF.DG1 (tag 61), as text. */
export function mrzOfDg1(dg1: Uint8Array): string {
  const outer = readTlv(dg1, 0);
  if (outer.tag !== 0x61 || outer.end !== dg1.length) throw new MrzError("DG1 is not a 61 data object");
  const inner = readTlv(dg1, outer.valueStart);
  if (inner.tag !== 0x5f1f) throw new MrzError("DG1 holds no MRZ (5F1F)");
  return new TextDecoder("ascii", { fatal: true }).decode(dg1.subarray(inner.valueStart, inner.end));
}

/** The fields of an MRZ of one of the three formats; anything else is an `MrzError`. */
export function parseMrz(mrz: string, today: Date): MachineReadableZone {
  const layout = LAYOUTS[mrz.length as keyof typeof LAYOUTS];
  if (!layout || !/^[A-Z0-9<]+$/.test(mrz)) throw new MrzError(`an MRZ of ${mrz.length} characters is none of TD1, TD2, TD3`);
  const field = (start: number, length: number) => {
    const value = mrz.slice(start, start + length);
    if (checkDigit(value) !== mrz[start + length]) throw new MrzError(`check digit of ${value} does not match`);
    return value;
  };
  const expiry = field(layout.expiry, 6);
  const birth = field(layout.birth, 6);
  const issuing = mrz.slice(layout.state, layout.state + 3).replace(/<+$/, "");
  if (!/^[A-Z]{1,3}$/.test(issuing)) throw new MrzError("issuing state is not an ICAO code");
  const expiresOn = isoDate(`20${expiry.slice(0, 2)}`, expiry.slice(2));
  if (!expiresOn) throw new MrzError("expiry is not a date");
  return {
    document_type: documentTypeOf(mrz.slice(0, 2)),
    issuing_country: issuing,
    expires_on: expiresOn,
    date_of_birth: birthDate(birth, today),
  };
}

function documentTypeOf(code: string): DocumentType {
  if (code[0] === "P") return "passport";
  if (!"IAC".includes(code[0])) throw new MrzError(`document code ${code} is not an eMRTD passport or card`);
  return code[1] === "R" ? "residence_permit" : "national_id";
}

/** A birth date YYMMDD: the century that puts it in the past. */
function birthDate(yymmdd: string, today: Date): string | null {
  if (yymmdd.includes("<")) return null;
  const recent = isoDate(`20${yymmdd.slice(0, 2)}`, yymmdd.slice(2));
  return recent && recent <= today.toISOString().slice(0, 10) ? recent : isoDate(`19${yymmdd.slice(0, 2)}`, yymmdd.slice(2));
}

function isoDate(year: string, mmdd: string): string | null {
  const text = `${year}-${mmdd.slice(0, 2)}-${mmdd.slice(2)}`;
  const date = new Date(`${text}T00:00:00Z`);
  return Number.isNaN(date.getTime()) || date.toISOString().slice(0, 10) !== text ? null : text;
}

/** ICAO 9303 part 3, 4.9: weights 7 3 1, `<` is 0, letters 10 to 35. */
export function checkDigit(value: string): string {
  let sum = 0;
  for (let i = 0; i < value.length; i++) {
    const c = value.charCodeAt(i);
    const n = c === 60 ? 0 : c <= 57 ? c - 48 : c - 55;
    sum += n * [7, 3, 1][i % 3];
  }
  return String(sum % 10);
}

/** One BER-TLV data object of the LDS (tags of one or two bytes, definite lengths). */
export function readTlv(bytes: Uint8Array, at: number): { tag: number; valueStart: number; end: number } {
  let i = at;
  let tag = bytes[i++];
  if ((tag & 0x1f) === 0x1f) tag = (tag << 8) | bytes[i++];
  let length = bytes[i++];
  if (length === undefined || tag === undefined) throw new MrzError("truncated data object");
  if (length & 0x80) {
    const count = length & 0x7f;
    if (count < 1 || count > 3) throw new MrzError("unsupported length");
    length = 0;
    for (let k = 0; k < count; k++) length = (length << 8) | (bytes[i++] ?? Number.NaN);
  }
  const end = i + length;
  if (!Number.isInteger(end) || end > bytes.length) throw new MrzError("truncated data object");
  return { tag, valueStart: i, end };
}

/** Whole years between `birthDate` and `today` (both YYYY-MM-DD), as a person counts their age. */
export function ageOn(birthDate: string, today: string): number {
  const [by, bm, bd] = birthDate.split("-").map(Number);
  const [ty, tm, td] = today.split("-").map(Number);
  return ty - by - (tm < bm || (tm === bm && td < bd) ? 1 : 0);
}
