/**
 * The person's page reads what the server answers (shared/contracts/me.ts): each answer schema's
 * output gives every field the page's types name, with a type the page can read. Checked by the
 * compiler (`npx tsc --noEmit`) through expectTypeOf, and run so the file counts.
 */
import type * as v from "valibot";
import { describe, expectTypeOf, it } from "vitest";
import type {
  MeDeviceRenamed,
  MeErased,
  MeExportCreated,
  MePasskeyOptions,
  MeReads,
  MeScreen,
  MeSession,
  MeSignedIn,
} from "../../shared/contracts/me";
import type { deviceListSchema, renamedDeviceSchema } from "../../shared/devices/devices";
import type {
  consentLedgerSchema,
  erasedSchema,
  exportCreatedSchema,
  passkeyOptionsAnswerSchema,
  personDisclosuresSchema,
  personMandatesSchema,
  personMerchantsSchema,
  personReceiptsSchema,
  personSessionSchema,
  signedInSchema,
  signInStartedSchema,
} from "../../shared/persons/answers";

type Out<S extends v.GenericSchema> = v.InferOutput<S>;

describe("the person's page's contract", () => {
  it("every answer gives the fields the page reads", () => {
    expectTypeOf<Out<typeof personMandatesSchema>>().toMatchTypeOf<MeReads["mandates"]>();
    expectTypeOf<Out<typeof personMerchantsSchema>>().toMatchTypeOf<MeReads["merchants"]>();
    expectTypeOf<Out<typeof consentLedgerSchema>>().toMatchTypeOf<MeReads["consentLedger"]>();
    expectTypeOf<Out<typeof personDisclosuresSchema>>().toMatchTypeOf<MeReads["disclosures"]>();
    expectTypeOf<Out<typeof personReceiptsSchema>>().toMatchTypeOf<MeReads["receipts"]>();
    expectTypeOf<Out<typeof deviceListSchema>>().toMatchTypeOf<MeReads["devices"]>();
    expectTypeOf<Out<typeof renamedDeviceSchema>>().toMatchTypeOf<MeDeviceRenamed>();
    expectTypeOf<Out<typeof signInStartedSchema>>().toMatchTypeOf<MeScreen>();
    expectTypeOf<Out<typeof signedInSchema>>().toMatchTypeOf<MeSignedIn>();
    expectTypeOf<Out<typeof passkeyOptionsAnswerSchema>>().toMatchTypeOf<Omit<MePasskeyOptions, "options">>();
    expectTypeOf<Out<typeof personSessionSchema>>().toMatchTypeOf<MeSession>();
    expectTypeOf<Out<typeof exportCreatedSchema>>().toMatchTypeOf<MeExportCreated>();
    expectTypeOf<Out<typeof erasedSchema>>().toMatchTypeOf<MeErased>();
  });
});
