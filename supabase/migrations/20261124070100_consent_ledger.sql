-- ============================================================================
-- Consent ledger: every consent a person gave (at enrolment), every disclosure
-- made under it, and every end of either (withdrawal, retention run out,
-- revocation of a disclosure, erasure of what a consent covered), as rows of
-- one append-only ledger, hash-chained per identity. private.consents, the
-- enrolment consents the rest of the schema reads (merchant isolation of
-- face-identify and the sink), becomes a view over the ledger; writing to it
-- appends. consent_ledger_verify checks every chain (the CLI: consent verify).
-- ============================================================================

-- ----------------------------------------------------------------------------
-- The ledger
-- ----------------------------------------------------------------------------
create table private.consent_ledger (
  id uuid primary key default gen_random_uuid(),
  identity_id uuid not null references private.identities (id),
  seq bigint not null check (seq >= 1),
  kind text not null check (kind in ('consent_granted', 'consent_withdrawn', 'consent_expired', 'disclosure',
                                     'disclosure_revoked', 'data_erased')),
  merchant_id uuid not null references private.merchants (id),
  refers_to uuid references private.consent_ledger (id),
  consent_token_hash text unique check (consent_token_hash ~ '^[0-9a-f]{64}$'),
  payload jsonb not null default '{}' check (jsonb_typeof(payload) = 'object'),
  recorded_at timestamptz not null,
  prev_hash text not null check (prev_hash ~ '^[0-9a-f]{64}$'),
  row_hash text not null check (row_hash ~ '^[0-9a-f]{64}$'),
  unique (identity_id, seq),
  check ((kind in ('consent_granted', 'disclosure')) = (refers_to is null)),
  check ((kind = 'disclosure') = (consent_token_hash is not null)),
  check (kind <> 'consent_granted' or (length(payload ->> 'version') between 1 and 64
                                       and (payload ->> 'retention_days')::int between 1 and 3650))
);
comment on table private.consent_ledger is 'Append-only, hash-chained per identity: consents given, disclosures made, and their ends. No row is ever updated or deleted (triggers refuse it; nobody is granted either).';
comment on column private.consent_ledger.id is 'Entry id; a disclosure''s id is its disclosure_id.';
comment on column private.consent_ledger.identity_id is 'The person whose chain the entry belongs to.';
comment on column private.consent_ledger.seq is 'Position in the person''s chain, from 1, without gaps.';
comment on column private.consent_ledger.kind is 'consent_granted (enrolment), consent_withdrawn, consent_expired (retention ran out), disclosure, disclosure_revoked, data_erased (what an ended consent covered was erased).';
comment on column private.consent_ledger.merchant_id is 'The merchant the consent or disclosure is with.';
comment on column private.consent_ledger.refers_to is 'The entry this one ends or follows up: the consent withdrawn, expired or erased, the disclosure revoked.';
comment on column private.consent_ledger.consent_token_hash is 'Disclosures only: SHA-256 hex of the consent_token handed to the merchant (the token itself is never stored).';
comment on column private.consent_ledger.payload is 'What the entry records: version and retention_days of a consent; the fields, purpose and expiry of a disclosure (never a disclosed value); counts of what was erased.';
comment on column private.consent_ledger.recorded_at is 'Server time of the entry.';
comment on column private.consent_ledger.prev_hash is 'row_hash of the previous entry of the same person (64 zeros for the first).';
comment on column private.consent_ledger.row_hash is 'SHA-256 hex of the entry (private.consent_entry_hash), prev_hash included: the chain.';
create unique index consent_ledger_ends_idx on private.consent_ledger (refers_to)
  where kind in ('consent_withdrawn', 'consent_expired', 'disclosure_revoked');
create unique index consent_ledger_erased_idx on private.consent_ledger (refers_to) where kind = 'data_erased';
create index consent_ledger_grants_idx on private.consent_ledger (identity_id, merchant_id) where kind = 'consent_granted';
-- a merchant's consented persons, where face_template_search starts when they are few
create index consent_ledger_merchant_grants_idx on private.consent_ledger (merchant_id, identity_id) where kind = 'consent_granted';
create index consent_ledger_grants_time_idx on private.consent_ledger (recorded_at) where kind = 'consent_granted';

-- ----------------------------------------------------------------------------
-- Chain heads: the last entry of each person's chain, locked by every append
-- ----------------------------------------------------------------------------
create table private.consent_chain_heads (
  identity_id uuid primary key references private.identities (id),
  seq bigint not null check (seq >= 0),
  row_hash text not null check (row_hash ~ '^[0-9a-f]{64}$')
);
comment on table private.consent_chain_heads is 'The head of each person''s consent chain. An append locks it for update, so concurrent appends line up into one chain; verification compares it with the last entry (a removed tail shows).';
comment on column private.consent_chain_heads.identity_id is 'The person.';
comment on column private.consent_chain_heads.seq is 'seq of the last entry (0 before the first).';
comment on column private.consent_chain_heads.row_hash is 'row_hash of the last entry (64 zeros before the first).';

-- private.consent_entry_hash(entry): SHA-256 hex of everything an entry says but its own row_hash, as
-- jsonb text (keys in jsonb's fixed order; the time in UTC with microseconds, whatever the session's zone).
create or replace function private.consent_entry_hash(e private.consent_ledger) returns text
language sql stable set search_path = '' as $$
  select encode(pg_catalog.sha256(convert_to(jsonb_build_object(
    'id', e.id, 'identity_id', e.identity_id, 'seq', e.seq, 'kind', e.kind, 'merchant_id', e.merchant_id,
    'refers_to', e.refers_to, 'consent_token_hash', e.consent_token_hash, 'payload', e.payload,
    'recorded_at', to_char(e.recorded_at at time zone 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.US"Z"'),
    'prev_hash', e.prev_hash)::text, 'UTF8')), 'hex')
$$;
comment on function private.consent_entry_hash(private.consent_ledger) is 'The hash an entry is chained by: SHA-256 over the entry (prev_hash included, row_hash excluded).';

-- Every insert is chained here, whoever writes it: the head is locked, the entry takes the next seq and
-- the head's hash as prev_hash, and the head moves on.
create or replace function private.consent_ledger_chain() returns trigger
language plpgsql set search_path = '' as $$
declare
  v_head private.consent_chain_heads;
begin
  insert into private.consent_chain_heads (identity_id, seq, row_hash) values (new.identity_id, 0, repeat('0', 64))
  on conflict do nothing;
  select * into v_head from private.consent_chain_heads where identity_id = new.identity_id for update;
  new.id := coalesce(new.id, gen_random_uuid());
  new.seq := v_head.seq + 1;
  new.prev_hash := v_head.row_hash;
  new.row_hash := private.consent_entry_hash(new);
  update private.consent_chain_heads set seq = new.seq, row_hash = new.row_hash where identity_id = new.identity_id;
  return new;
end $$;
comment on function private.consent_ledger_chain() is 'Chains each new ledger entry to its person''s head under a row lock.';
create trigger consent_ledger_chain before insert on private.consent_ledger
  for each row execute function private.consent_ledger_chain();
comment on trigger consent_ledger_chain on private.consent_ledger is 'Chains every new entry to its person''s head.';

-- private.refuse_change (the mandates migration's) raises HA423 for every update, delete and truncate.
create trigger consent_ledger_append_only before update or delete on private.consent_ledger
  for each row execute function private.refuse_change();
create trigger consent_ledger_no_truncate before truncate on private.consent_ledger
  for each statement execute function private.refuse_change();
comment on trigger consent_ledger_append_only on private.consent_ledger is 'No entry is ever updated or deleted.';
comment on trigger consent_ledger_no_truncate on private.consent_ledger is 'The ledger is never truncated.';

-- ----------------------------------------------------------------------------
-- The enrolment consents move into the ledger
-- ----------------------------------------------------------------------------
-- Each consent becomes a consent_granted entry with the same id; a withdrawn one is followed by its
-- consent_withdrawn entry; each person's entries are chained in the order they happened.
alter table private.consents rename to consents_before_ledger;
do $$
declare
  v_event record;
begin
  for v_event in
    select * from (
      select c.identity_id, c.granted_at as at, 0 as step, c.id, c.merchant_id, c.version, c.retention_days
      from private.consents_before_ledger c
      union all
      select c.identity_id, c.revoked_at, 1, c.id, c.merchant_id, null, null
      from private.consents_before_ledger c where c.revoked_at is not null
    ) events order by identity_id, at, step, id
  loop
    if v_event.step = 0 then
      insert into private.consent_ledger (id, identity_id, kind, merchant_id, payload, recorded_at)
      values (v_event.id, v_event.identity_id, 'consent_granted', v_event.merchant_id,
              jsonb_build_object('version', v_event.version, 'retention_days', v_event.retention_days), v_event.at);
    else
      insert into private.consent_ledger (identity_id, kind, merchant_id, refers_to, recorded_at)
      values (v_event.identity_id, 'consent_withdrawn', v_event.merchant_id, v_event.id, v_event.at);
    end if;
  end loop;
end $$;
drop table private.consents_before_ledger;

-- private.consents: the enrolment consents as the ledger holds them, each with the time it ended
-- (withdrawn, or its retention ran out) as revoked_at. Everything that asks "did this person consent
-- with this merchant" reads it (face_template_search, face_identify, identity_resolve, identity_enroll).
create view private.consents as
select g.id, g.identity_id, g.merchant_id, g.payload ->> 'version' as version,
       (g.payload ->> 'retention_days')::int as retention_days, g.recorded_at as granted_at, e.recorded_at as revoked_at
from private.consent_ledger g
left join private.consent_ledger e on e.refers_to = g.id and e.kind in ('consent_withdrawn', 'consent_expired')
where g.kind = 'consent_granted';
comment on view private.consents is 'Enrolment consents, read from the consent ledger; an insert appends a consent_granted entry.';
comment on column private.consents.id is 'The consent_granted entry.';
comment on column private.consents.identity_id is 'Who consented.';
comment on column private.consents.merchant_id is 'Through which merchant.';
comment on column private.consents.version is 'Version of the consent text the person accepted.';
comment on column private.consents.retention_days is 'How long what the consent covers may be kept, from granted_at.';
comment on column private.consents.granted_at is 'When consent was given.';
comment on column private.consents.revoked_at is 'When the consent ended: withdrawn, or its retention ran out (null while it stands).';

-- Writing a consent (identity_enroll does) appends to the ledger: the grant and, when the row says it
-- was already withdrawn, the withdrawal.
create or replace function private.consents_append() returns trigger
language plpgsql set search_path = '' as $$
begin
  new.id := coalesce(new.id, gen_random_uuid());
  insert into private.consent_ledger (id, identity_id, kind, merchant_id, payload, recorded_at)
  values (new.id, new.identity_id, 'consent_granted', new.merchant_id,
          jsonb_build_object('version', new.version, 'retention_days', new.retention_days), new.granted_at);
  if new.revoked_at is not null then
    insert into private.consent_ledger (identity_id, kind, merchant_id, refers_to, recorded_at)
    values (new.identity_id, 'consent_withdrawn', new.merchant_id, new.id, new.revoked_at);
  end if;
  return new;
end $$;
comment on function private.consents_append() is 'An insert into private.consents appended to the consent ledger.';
create trigger consents_append instead of insert on private.consents
  for each row execute function private.consents_append();
comment on trigger consents_append on private.consents is 'An enrolment consent written is a consent_granted entry appended.';

-- ============================================================================
-- RPCs
-- ============================================================================

-- consent_ledger_verify({identity_id?, limit?}) -> {ok, identities, entries, breaks: [{identity_id, seq, reason}]}
-- Recomputes every entry's hash and checks it links to the one before, that seq has no gap, and that
-- the head names the last entry. Reasons: row_hash_mismatch (an entry was altered), prev_hash_mismatch
-- (the chain was cut or reordered), seq_gap (an entry is missing), head_mismatch (the tail was removed or
-- the head moved). At most `limit` (default 100) breaks are listed; ok says whether there was none.
create or replace function public.consent_ledger_verify(p jsonb) returns jsonb
language sql stable security definer set search_path = '' as $$
  with scope as (
    select (p ->> 'identity_id')::uuid as identity_id
  ),
  entries as (
    select l.identity_id, l.seq, l.row_hash, l.prev_hash, private.consent_entry_hash(l) as computed,
           lag(l.row_hash) over chain as previous_hash, lag(l.seq) over chain as previous_seq,
           row_number() over (partition by l.identity_id order by l.seq desc) = 1 as last
    from private.consent_ledger l, scope
    where scope.identity_id is null or l.identity_id = scope.identity_id
    window chain as (partition by l.identity_id order by l.seq)
  ),
  breaks as (
    select identity_id, seq,
           case when row_hash <> computed then 'row_hash_mismatch'
                when prev_hash <> coalesce(previous_hash, repeat('0', 64)) then 'prev_hash_mismatch'
                when seq <> coalesce(previous_seq, 0) + 1 then 'seq_gap' end as reason
    from entries
    union all
    select h.identity_id, h.seq, 'head_mismatch'
    from private.consent_chain_heads h, scope
    where (scope.identity_id is null or h.identity_id = scope.identity_id)
      and not exists (select 1 from entries e where e.identity_id = h.identity_id and e.last
                      and e.seq = h.seq and e.row_hash = h.row_hash)
      and h.seq > 0
  ),
  found as (
    select identity_id, seq, reason from breaks where reason is not null
  )
  select jsonb_build_object(
    'ok', not exists (select 1 from found),
    'identities', (select count(distinct identity_id) from entries),
    'entries', (select count(*) from entries),
    'breaks', coalesce((select jsonb_agg(jsonb_build_object('identity_id', identity_id, 'seq', seq, 'reason', reason)
                                         order by identity_id, seq)
                        from (select * from found order by identity_id, seq
                              limit least(greatest(coalesce((p ->> 'limit')::int, 100), 1), 1000)) listed), '[]'))
$$;
comment on function public.consent_ledger_verify(jsonb) is 'Checks the hash chain of every person''s consent ledger (or one person''s) and lists where it breaks.';
