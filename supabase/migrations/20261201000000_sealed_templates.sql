-- ============================================================================
-- Templates at rest (issue 29, D-680): the template store keeps no embedding in the clear. Each
-- template is a search code (2,048 bits: the side of each of 2,048 secret hyperplanes, derived in
-- the Worker from TEMPLATE_PROTECTION_KEY) that picks candidates by Hamming distance, and the
-- protected embedding sealed (pgcrypto, AES-256) under a key kept here, in a table only the RPCs'
-- definer reads: the RPCs re-check the candidates exactly, and no RPC ever answers an embedding.
-- Templates stored before are sealed here; their code, which needs the Worker's key, is null until
-- they are enrolled again, and a template without one is always re-checked (never missed).
-- ============================================================================

-- pgcrypto where it is not installed yet: in private, out of every caller's reach. A deployment that
-- has it elsewhere (Supabase keeps it in `extensions`) keeps it there; the seal's functions find it.
do $$
begin
  if not exists (select 1 from pg_extension where extname = 'pgcrypto') then
    create extension pgcrypto with schema private;
  end if;
end $$;

create table private.template_seal_keys (
  id int generated always as identity primary key,
  secret bytea not null check (length(secret) = 32),
  created_at timestamptz not null,
  retired_at timestamptz
);
comment on table private.template_seal_keys is
  'The keys templates are sealed under (D-680). Read only by the RPCs'' definer: a Worker, whose role executes RPCs and reads no table, never holds one.';
comment on column private.template_seal_keys.id is 'The key''s number, which each sealed template names.';
comment on column private.template_seal_keys.secret is '32 bytes from the server''s strong random source (two gen_random_uuid, 244 random bits).';
comment on column private.template_seal_keys.created_at is 'When the key was made.';
comment on column private.template_seal_keys.retired_at is 'When a newer key replaced it (every template re-sealed under that one); null for the current key.';
create unique index template_seal_keys_current_idx on private.template_seal_keys ((true)) where retired_at is null;

insert into private.template_seal_keys (secret, created_at)
values (substring(uuid_send(gen_random_uuid()) || uuid_send(gen_random_uuid()) for 32), now());

alter table private.face_templates
  add column code bit(2048),
  add column sealed bytea,
  add column seal_key_id int references private.template_seal_keys (id);
comment on column private.face_templates.code is
  'Search code: one bit per secret hyperplane of the Worker''s key (D-680); Hamming distance picks candidates, never decides. Null for a template sealed by the migration of D-680 until it is enrolled again.';
comment on column private.face_templates.sealed is 'The protected embedding, sealed (pgcrypto, AES-256) under seal_key_id: the exact re-check''s only input.';
comment on column private.face_templates.seal_key_id is 'The key the embedding is sealed under.';

-- The stored embeddings, sealed under the new key; then the clear columns go.
do $$
declare
  v_schema text := (select e.extnamespace::regnamespace::text from pg_extension e where e.extname = 'pgcrypto');
begin
  execute format($q$
    update private.face_templates t
    set sealed = %s.pgp_sym_encrypt(array_to_string(t.embedding, ','), encode(k.secret, 'hex'), 'cipher-algo=aes256, s2k-mode=1'),
        seal_key_id = k.id
    from private.template_seal_keys k
    where k.retired_at is null$q$, v_schema);
end $$;

drop index if exists private.face_templates_hnsw_idx;
alter table private.face_templates drop column if exists embedding_vector;
alter table private.face_templates drop column embedding;
alter table private.face_templates
  alter column sealed set not null,
  alter column seal_key_id set not null;
comment on table private.face_templates is
  'Templates without an embedding in the clear (D-680): a search code under the Worker''s key and the protected embedding sealed under a key only the RPCs read.';
