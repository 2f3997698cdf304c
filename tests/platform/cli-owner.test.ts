import { describe, expect, inject, it } from "vitest";
import { merchantFactory } from "../harness/factories";
import { enrollPerson } from "../harness/identity";
import { type Ran, cli as runCli } from "../harness/spawn";

const cli = (...args: string[]) => runCli(args, { DATABASE_URL: inject("databaseUrl") });

function json(ran: Ran): any {
  expect(ran.code, ran.stderr).toBe(0);
  return JSON.parse(ran.stdout);
}

function expectFailure(ran: Ran, message: RegExp) {
  expect(ran.code).not.toBe(0);
  expect(ran.stdout).toBe("");
  expect(ran.stderr).toMatch(message);
}

describe("cli merchant owner", () => {
  it("adds an enrolled person by subject_ref, lists, repeats harmlessly and removes", async () => {
    const m = await merchantFactory();
    const { subject_ref } = await enrollPerson(m.keys.pk_test, 31);

    const added = json(await cli("merchant", "owner", "add", "--merchant", m.merchant_id, "--subject-ref", subject_ref, "--json"));
    expect(added).toMatchObject({ already_owner: false, owner: { merchant_id: m.merchant_id, subject_ref, environment: "test" } });
    const [again, listed] = (
      await Promise.all([
        cli("merchant", "owner", "add", "--merchant", m.merchant_id, "--subject-ref", subject_ref, "--json"),
        cli("merchant", "owner", "list", "--merchant", m.merchant_id, "--json"),
      ])
    ).map(json);
    expect(again).toMatchObject({ already_owner: true, owner: { added_at: added.owner.added_at } });
    expect(listed.owners).toEqual([added.owner]);
    // The identity id never appears: the operator names owners by the merchant's pseudonym.
    expect(JSON.stringify(listed)).not.toMatch(/identity/);

    const removed = json(await cli("merchant", "owner", "remove", "--merchant", m.merchant_id, "--subject-ref", subject_ref, "--json"));
    expect(removed).toEqual({ merchant_id: m.merchant_id, subject_ref, removed: true });
    const [after, twice] = (
      await Promise.all([
        cli("merchant", "owner", "list", "--merchant", m.merchant_id, "--json"),
        cli("merchant", "owner", "remove", "--merchant", m.merchant_id, "--subject-ref", subject_ref, "--json"),
      ])
    ).map(json);
    expect(after.owners).toEqual([]);
    expect(twice.removed).toBe(false);
  }, 180_000);

  it("refuses a pseudonym another merchant holds, an unknown one and an unknown merchant", async () => {
    const [m, other] = await Promise.all([merchantFactory(), merchantFactory()]);
    const { subject_ref } = await enrollPerson(other.keys.pk_test, 32);
    const [otherMerchants, malformed, unknownMerchant, badId, unknownCommand] = await Promise.all([
      cli("merchant", "owner", "add", "--merchant", m.merchant_id, "--subject-ref", subject_ref, "--json"),
      cli("merchant", "owner", "add", "--merchant", m.merchant_id, "--subject-ref", "sub_nope", "--json"),
      cli("merchant", "owner", "list", "--merchant", "00000000-0000-4000-8000-000000000000", "--json"),
      cli("merchant", "owner", "list", "--merchant", "nope", "--json"),
      cli("merchant", "owner", "grant", "--merchant", m.merchant_id),
    ]);
    expectFailure(otherMerchants, /no person enrolled with it has that subject_ref/);
    expectFailure(malformed, /no person enrolled with it has that subject_ref/);
    expectFailure(unknownMerchant, /unknown merchant/);
    expectFailure(badId, /--merchant must be a merchant id/);
    expectFailure(unknownCommand, /unknown command "merchant owner grant"/);
  }, 180_000);
});
