-- ============================================================================
-- The person's own page (issue 31; docs/decisions.md, D-471): an export of
-- everything held about the person, generated on request, downloadable once,
-- expiring after fifteen minutes. Its content is deleted when downloaded or
-- when the next export of anyone finds it expired.
-- ============================================================================

create table private.person_exports (
  id uuid primary key,
  identity_id uuid not null references private.identities (id),
  content jsonb check (jsonb_typeof(content) = 'object'),
  created_at timestamptz not null,
  expires_at timestamptz not null check (expires_at > created_at),
  downloaded_at timestamptz,
  check (downloaded_at is null or content is null)
);
comment on table private.person_exports is 'Exports a person asked for on their own page: one JSON document each, downloadable once, until expires_at.';
comment on column private.person_exports.id is 'Export id (answered as exp_ + 32 hex).';
comment on column private.person_exports.identity_id is 'The person it is about; only their session downloads it.';
comment on column private.person_exports.content is 'The export file (docs/functions.md#me, "The export file"); null once downloaded or expired.';
comment on column private.person_exports.created_at is 'When it was generated.';
comment on column private.person_exports.expires_at is 'After this it cannot be downloaded, and its content is deleted.';
comment on column private.person_exports.downloaded_at is 'When it was downloaded; null until then. Set once, and the content deleted with it.';
create index person_exports_expiry_idx on private.person_exports (expires_at) where content is not null;
