/**
 * The schema is defined once (supabase/migrations for tables and data, supabase/domains for functions
 * and triggers), and it is the schema the history built. A database built from the migrations of
 * 7ad62db (tests/fixtures/migrations-7ad62db.ts) has exactly the schema a fresh database gets from
 * the runner; the runner upgrades it in place (recording the folded migrations, applying the domain
 * files) to that same schema, and a re-run is a no-op. A function defined by no domain file is
 * dropped. Scratch databases; needs a real Postgres.
 */
import { randomBytes } from "node:crypto";
import { describe, expect, inject, it } from "vitest";
import { applyMigrations } from "../../scripts/local/migrations";
import { connect, type Sql } from "../../shared/kernel/db/client";
import { applyAs7ad62db, migrationsAt7ad62db } from "../fixtures/migrations-7ad62db";
import { schemaDifference, schemaSnapshot } from "./schema-snapshot";

const realPostgres = Boolean(process.env.DATABASE_URL);

/**
 * What changed in the schema on purpose since 7ad62db, so the comparison with the history stays
 * exact about everything else: functions renamed (the /v1 surface's name left the domains' SQL),
 * and the functions whose bodies changed only because they call a renamed one.
 */
const RENAMED_SINCE_7AD62DB: Record<string, string> = {
  "public.resource_api_authenticate": "public.bearer_key_authenticate",
  "public.resource_mandate_create": "public.mandate_issue_stored",
  "public.resource_session_create": "public.mode_session_create",
  "public.resource_session_get": "public.mode_session_get",
  "private.resource_session_json": "private.mode_session_json",
  "private.resource_session_status": "private.mode_session_status",
  "private.resource_session_terms": "private.mode_session_terms",
  "private.mandate_resource_json": "private.mandate_object_json",
};
const BODIES_CHANGED_SINCE_7AD62DB: string[] = [
  "private.hosted_session_end",
  "private.hosted_session_event",
  "public.hosted_session_consume",
  "public.mandate_page",
  // A replay of a consumption is the ledger's (issue 25): idempotency_begin answers 'ledger', idempotency_finish names the mandate.
  "public.idempotency_begin",
  "public.idempotency_finish",
  // A capture carries its purpose and only a grant capture proves a grant, once (issue 25): mandate_issue checks and
  // marks it, capture_record and identity_claim write the purpose, disclosure_subject refuses a card's or a grant's.
  "public.capture_record",
  "public.disclosure_subject",
  "public.identity_claim",
  "public.mandate_issue",
  // The at-limit threshold's arithmetic on a count ceiling is bigint (issue 25: int overflowed above 21,474,836).
  "public.mandate_consume",
  // A lifetime ceiling at zero reads exhausted, derived; consumed is no stored status any more (issue 29).
  "private.mandate_decide",
  "private.mandate_effective_status",
  "private.mandates_refuse_update",
  // A status list is read on past 1,000 with issued_before (issue 29).
  "public.mandate_list",
  // A capture records the device that signed it, and an enrolment stores the person's first device (issue 27).
  "public.identity_enroll",
  // A rolled key stops at its end, a key without the api scope authenticates only where scopes are checked, last use is kept (issue 30).
  "private.request_authenticate",
  // Every sent attempt is kept for the delivery log (issue 30).
  "public.webhook_deliveries_record",
  // Release and claim share the live-reservation rule (private.alias_reservation_held, added with the claims).
  "public.alias_release",
  // An owner's sign-in shares the login session's verdict with a person's (private.sign_in_session_refusal, added with the person's sign-in).
  "public.agent_sign_in_finish",
  // face-identify answers the runner-up's similarity too: a near miss is no match (issue 26, D-385).
  "public.face_identify",
  // What an ended consent covered is erased by one helper the retention sweep and the person's own erasure share (issue 31).
  "public.consent_retention_sweep",
  // A mandate standing in records and answers device_binding none, and its mandate block the grant's (issue 27, D-486).
  "public.mandate_transaction",
  // Authentication answers the circuit breaker's state when asked, so the sink spends no round trip on it (issue 28, D-506).
  "public.request_authenticate",
  // An anchor is recorded pending before its root is sent and confirmed later (issue 29, D-515): the record takes the
  // publication and whether it is confirmed, and the read answers confirmed_at.
  "public.receipt_anchor_record",
  "public.receipt_get",
  // Fan-out and claim take an optional scope, a quick pass after a request working for its merchants only (D-660).
  "public.webhook_fanout",
  "public.webhook_deliveries_claim",
  // A session names the merchant page that opens the screen in a popup (issue 27, D-643).
  "public.hosted_session_create",
  // Templates at rest are sealed (issue 29, D-680): the search picks candidates by code and re-checks them
  // exactly; resolving an identity no longer answers its template.
  "public.face_template_search",
  "public.identity_resolve",
];

/**
 * The migrations written after the fold (they run on a 7ad62db database as on any), each with the
 * snapshot lines of what it and its domain's functions add or change: the history has none of them
 * (or their old form), so they are left out of the comparison with it on both sides, and the upgrade must apply exactly these migrations.
 */
const MIGRATIONS_SINCE_7AD62DB: Record<string, RegExp> = {
  "20261127002500_capture_purpose.sql":
    /^column private\.captures #\d+ (purpose|grant_terms_digest|granted_mandate_id|refusal_code) |captures_(purpose_check|grant_terms_digest_check|granted_mandate_id_fkey|grant_shows_terms|grants_once)\b/,
  "20261127003000_v1_check_replays_by_ledger.sql": /(?!)/, // data only: adds no schema
  "20261127003100_devices.sql": /(private|public)\.device_/,
  "20261127003200_at_limit_default.sql": /^column private\.merchants #\d+ at_limit_threshold_percent /,
  "20261127003300_lifetime_exhausted.sql": /^(column private\.mandates #\d+ status |constraint private\.mandates mandates_status_check )/,
  "20261127150000_management.sql":
    /^column private\.api_keys #\d+ (scopes|name|expires_at|last_used_at|rolled_to) |^constraint private\.api_keys api_keys_(check|name_check|rolled_to_fkey|scopes_check) |(private|public)\.management_|webhook_delivery_attempts|^column private\.webhook_deliveries #\d+ origin |webhook_deliveries_origin_check/,
  "20261127110000_device_management.sql": /(private|public)\.device_/,
  "20261127150100_owner_invitations.sql": /owner_invitation/,
  "20261127003400_alias_claims.sql":
    /^(column private\.aliases #\d+ (identity_id|claim_token_hash) |constraint private\.aliases aliases_identity_id_fkey |function (public\.alias_claim|private\.alias_reservation_held)\()/,
  "20261127160000_person_sessions.sql": /(private|public)\.person_|^function private\.(consent_erase_covered|sign_in_session_refusal)\(/,
  "20261127160100_person_erasure.sql": /(private|public)\.person_/,
  "20261127100000_capture_devices.sql":
    /^(column private\.captures #\d+ (device_id|device_binding) |constraint private\.captures captures_(device_id_fkey|device_binding_check|device_signed)\b)/,
  "20261127160200_person_exports.sql": /(private|public)\.person_/,
  "20261128100000_device_user_handles.sql": /(private|public)\.device_/,
  "20261128130000_anchor_publications.sql":
    /^column private\.receipt_anchors #\d+ (confirmed_at|first_confirmed_at|publication) |receipt_anchors_(confirmed_check|publication_check|open_idx|confirmed_idx)\b|^function (public\.receipt_anchors_open|public\.receipt_anchor_follow|private\.receipt_anchor_announce|private\.mandate_granted_emit|private\.identity_document_record)\(/,
  "20261129050000_person_passkey_sign_in.sql":
    /(private|public)\.person_|^constraint private\.hosted_sessions hosted_sessions_mode |^column private\.hosted_sessions #\d+ facetoken /,
  "20261128140000_theme_assets.sql":
    /theme_asset|private\.theme_url\b|^column private\.themes #\d+ (logo_(wide|square|icon)_url|font_(heading|body)_url) /,
  "20261129040000_support_read_views.sql": /receipts_merchant_page_idx|consent_ledger_merchant_page_idx/,
  "20261130010000_person_passkey_sweep.sql": /person_passkey_refusals_refused_idx|^function public\.person_passkey_sweep\(/,
  "20261203000000_person_sign_ins_sweep.sql": /person_sign_ins_created_idx/,
  "20261130040000_anchor_finality.sql": /^column private\.receipt_anchors #\d+ final_at |receipt_anchors_(final_check|unsettled_idx)\b/,
  "20261130020000_owner_console_sessions.sql": /(private|public)\.owner_(sign_in|session|merchants)|hosted_sessions_merchant_created_idx/,
  "20261130030000_hosted_session_opener_origin.sql":
    /^(column private\.hosted_sessions #\d+ opener_origin |constraint private\.hosted_sessions hosted_sessions_opener_origin_check )/,
  "20261201000000_sealed_templates.sql":
    /private\.template_(seal|unseal|similarity)|^column private\.face_templates #\d+ |face_templates_(embedding_check|seal_key_id_fkey)\b|^relation private\.face_templates |^function public\.face_template_verify\(/,
  // Only where pgvector exists, which the scratch database lacks: it adds nothing here.
  "20261206000000_template_code_hnsw.sql": /face_templates_code_hnsw_idx/,
  "20261206010000_owner_console_sweep.sql": /owner_sign_ins_created_idx|owner_sessions_created_idx|^function public\.owner_console_sweep\(/,
  "20261208000000_agent_sign_ins_sweep.sql": /agent_sign_ins_created_idx|^function public\.agent_sign_in_sweep\(/,
};
/**
 * Functions a domain file added since 7ad62db that no migration's table needs (the sink's stand-in in one call:
 * D-690, in one round trip: D-740; when a sign-in stops counting and the sweeps' day, each stated once: D-750).
 */
const FUNCTIONS_ADDED_SINCE_7AD62DB =
  /^function (private\.(keyset_page|webhook_scope|sweep_cutoff|sign_in_stale_at|sign_in_counts_until)|public\.stand_in_(transaction|request))\(/;
const addedSinceHistory = (line: string) =>
  FUNCTIONS_ADDED_SINCE_7AD62DB.test(line) || Object.values(MIGRATIONS_SINCE_7AD62DB).some((added) => added.test(line));

/** A snapshot line's function name (schema.name), or null for any other fact. */
function functionOf(line: string): string | null {
  return /^function ([a-z_]+\.[a-z_0-9]+)\(/.exec(line)?.[1] ?? null;
}

/**
 * `old` as it reads after the renames: names replaced; where a body changed on purpose, the md5 and
 * the comment (which says what the body does) left out of both.
 */
function sinceHistory(old: string[], fresh: string[]): { old: string[]; fresh: string[] } {
  const renamed = old.map((line) =>
    Object.entries(RENAMED_SINCE_7AD62DB).reduce((text, [from, to]) => text.replaceAll(`${from}(`, `${to}(`), line),
  );
  const forget = (line: string) => {
    const name = functionOf(line);
    const changed = name !== null && (BODIES_CHANGED_SINCE_7AD62DB.includes(name) || Object.values(RENAMED_SINCE_7AD62DB).includes(name));
    return changed
      ? line.replace(/ body md5 [0-9a-f]{32} /, " body md5 (changed on purpose) ").replace(/ comment .*$/, " comment (changed on purpose)")
      : line;
  };
  return {
    old: renamed
      .filter((line) => !addedSinceHistory(line))
      .map(forget)
      .sort(),
    fresh: fresh
      .filter((line) => !addedSinceHistory(line))
      .map(forget)
      .sort(),
  };
}

/** Runs `body` against a scratch database, dropped afterwards. */
async function withScratch<T>(label: string, body: (db: Sql) => Promise<T>): Promise<T> {
  const admin = connect(inject("databaseUrl"));
  const name = `hauth_${label}_${randomBytes(4).toString("hex")}`;
  await admin.unsafe(`create database ${name}`);
  const db = connect(Object.assign(new URL(inject("databaseUrl")), { pathname: `/${name}` }).toString());
  try {
    return await body(db);
  } finally {
    await db.end();
    await admin.unsafe(`drop database if exists ${name} with (force)`);
    await admin.end();
  }
}

describe.skipIf(!realPostgres)("the schema against its history (7ad62db)", () => {
  it("the old migrations alone build exactly the schema of a fresh database; the runner upgrades them to it in place", {
    timeout: 180_000,
  }, async () => {
    const fresh = await withScratch("fresh", async (db) => {
      const applied = await applyMigrations(db);
      expect(applied).toEqual(expect.arrayContaining(["20261127000100_platform.sql", "domains/identity.sql"]));
      expect(applied.filter((a) => a.startsWith("dropped "))).toEqual([]);
      return schemaSnapshot(db);
    });
    expect(fresh.length).toBeGreaterThan(500);

    await withScratch("upgrade", async (db) => {
      const old = migrationsAt7ad62db();
      expect(old.map((m) => m.name)).toHaveLength(28);
      await db.begin((tx) => applyAs7ad62db(tx, old));
      // the refold changed nothing but the renames listed above: each line is one object (or one of its
      // comments, grants, bodies)
      const since = sinceHistory(await schemaSnapshot(db), fresh);
      expect(schemaDifference(since.old, since.fresh)).toEqual({ onlyFirst: [], onlySecond: [] });

      const applied = await applyMigrations(db);
      // only the migrations since the fold and the domain files ran, and what they no longer define
      // went: the renamed functions' old names
      expect(applied.filter((a) => !a.startsWith("domains/") && !a.startsWith("dropped "))).toEqual(
        Object.keys(MIGRATIONS_SINCE_7AD62DB).sort(),
      );
      expect(
        applied
          .filter((a) => a.startsWith("dropped "))
          .map((a) => a.replace(/^dropped (.*)\(.*$/, "$1"))
          .sort(),
      ).toEqual(Object.keys(RENAMED_SINCE_7AD62DB).sort());
      expect(schemaDifference(await schemaSnapshot(db), fresh)).toEqual({ onlyFirst: [], onlySecond: [] });
      const recorded = (await db`select name from private.schema_migrations order by name`).map((r) => r.name);
      expect(recorded.some((n) => old.some((m) => m.name === n))).toBe(false);
      expect(await applyMigrations(db)).toEqual([]);
    });
  });

  it("drops a function no domain file defines, and refuses a database with only part of 7ad62db's migrations", {
    timeout: 120_000,
  }, async () => {
    await withScratch("stale", async (db) => {
      await applyMigrations(db);
      await db.unsafe(`create function private.left_behind() returns int language sql set search_path = '' as $$ select 1 $$;
                       update private.schema_domain_files set checksum = 'changed' where name = 'identity.sql'`);
      expect(await applyMigrations(db)).toContain("dropped private.left_behind()");
      expect((await db`select to_regprocedure('private.left_behind()') as f`)[0].f).toBeNull();
      expect(await schemaSnapshot(db)).toEqual(expect.arrayContaining([expect.stringContaining("public.identity_resolve(p jsonb)")]));
    });
    await withScratch("partial", async (db) => {
      await db.begin((tx) => applyAs7ad62db(tx, migrationsAt7ad62db().slice(0, 3)));
      await expect(applyMigrations(db)).rejects.toThrow(/3 of the 28 migrations of 7ad62db/);
    });
  });
});
