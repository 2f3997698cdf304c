-- ============================================================================
-- The resource API /v1 (resource API 4, 9; docs/resource-api.md): the
-- merchant's pinned version, authentication that answers it, and the mandate
-- listing with keyset pagination in the resource API's shape.
-- ============================================================================

-- ----------------------------------------------------------------------------
-- The merchant's pinned version (resource API 9: "when omitted, the account
-- default applies"). Pinned when the merchant is created, to the version
-- current then; a request's Service-Version header overrides it.
-- ----------------------------------------------------------------------------
alter table private.merchants add column api_version text not null default '2026-09-14'
  check (api_version ~ '^\d{4}-\d{2}-\d{2}$');
comment on column private.merchants.api_version is
  'The resource API version that answers this merchant''s requests sent without Service-Version; pinned at creation to the version current then.';
create index mandates_keyset_idx on private.mandates (merchant_id, environment, created_at desc, id desc);
comment on index private.mandates_keyset_idx is 'Pages of a merchant''s mandates, newest first, by (created_at, id).';
