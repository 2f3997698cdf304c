-- ============================================================================
-- A reserved alias is attached to a person (issue 29, function API 2.6: "an
-- alias is only a public handle attached to the identity"): alias_claim
-- redeems the reservation's claim token and sets identity_id, so identity_id
-- now names an identity, as the table's comment promised the claiming RPC would
-- make it. No row is claimed before this migration.
-- ============================================================================

alter table private.aliases
  add constraint aliases_identity_id_fkey foreign key (identity_id) references private.identities (id);

comment on column private.aliases.identity_id is
  'The identity the alias is attached to (alias_claim); null while only reserved. Never answered: callers name the person by subject_ref.';
comment on column private.aliases.claim_token_hash is
  'Lowercase hex SHA-256 of the claim_token returned by reserve; the token itself is never stored. Null once redeemed by a claim.';
